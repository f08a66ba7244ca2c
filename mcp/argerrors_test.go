package mcp

import (
	"testing"
)

// TestPlainArgErrors: the SDK's schema errors (as go-sdk v1.8.0 words
// them) reach the model in plain words.
func TestPlainArgErrors(t *testing.T) {
	for _, c := range []struct{ sdk, want string }{
		{`validating "arguments": validating root: validating /properties/startLine: minimum: -5/1 is less than 1.000000`, "startLine: must be at least 1"},
		{`validating "arguments": validating root: validating /properties/minScore: maximum: 3/1 is greater than 1.000000`, "minScore: must be at most 1"},
		{`validating "arguments": validating root: validating /properties/query: type: 5 has type "integer", want "string"`, "query: must be a string, not an integer"},
		{`validating "arguments": validating root: required: missing properties: ["content"]`, "missing argument: content"},
		{`validating "arguments": validating root: unexpected additional properties ["bogus"]`, `arguments: unexpected additional properties ["bogus"]`},
		{`validating "arguments": validating root: validating /properties/period: enum: year does not equal any of: [week month]`, "period: must be one of week, month, not year"},
		{"no such page: reference/x.md", "no such page: reference/x.md"},
	} {
		if got := plainArgError(c.sdk); got != c.want {
			t.Errorf("plainArgError(%q) = %q, want %q", c.sdk, got, c.want)
		}
	}
}
