package mcp

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainArgErrors rewords the SDK's schema validation errors of tool
// arguments ("validating \"arguments\": validating root: validating
// /properties/startLine: minimum: -5/1 is less than 1.000000") as a model
// can act on them ("startLine: must be at least 1").
func plainArgErrors(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcpsdk.CallToolResult); ok && r != nil && r.IsError {
			for _, c := range r.Content {
				if t, ok := c.(*mcpsdk.TextContent); ok {
					t.Text = plainArgError(t.Text)
				}
			}
		}
		return res, err
	}
}

var argErrorForms = []struct {
	re   *regexp.Regexp
	text func(m []string) string
}{
	{regexp.MustCompile(`/properties/(\w+): minimum: .* is less than ([-0-9.e+]+)`), func(m []string) string { return m[1] + ": must be at least " + number(m[2]) }},
	{regexp.MustCompile(`/properties/(\w+): maximum: .* is greater than ([-0-9.e+]+)`), func(m []string) string { return m[1] + ": must be at most " + number(m[2]) }},
	{regexp.MustCompile(`/properties/(\w+): type: .* has type "(\w+)", want "(\w+)"`), func(m []string) string { return m[1] + ": must be " + a(m[3]) + ", not " + a(m[2]) }},
	{regexp.MustCompile(`/properties/(\w+): minLength: `), func(m []string) string { return m[1] + ": must not be empty" }},
	{regexp.MustCompile(`/properties/(\w+): enum: (.*) does not equal any of: \[(.*)\]`), func(m []string) string {
		return m[1] + ": must be one of " + strings.Join(strings.Fields(m[3]), ", ") + ", not " + m[2]
	}},
	{regexp.MustCompile(`required: missing properties: \[(.*)\]`), func(m []string) string {
		return "missing argument: " + strings.ReplaceAll(strings.ReplaceAll(m[1], `"`, ""), ",", ", ")
	}},
}

func plainArgError(text string) string {
	rest, ok := strings.CutPrefix(text, `validating "arguments": `)
	if !ok {
		return text
	}
	for _, f := range argErrorForms {
		if m := f.re.FindStringSubmatch(rest); m != nil {
			return f.text(m)
		}
	}
	return "arguments: " + strings.TrimPrefix(rest, "validating root: ")
}

// number prints a schema bound without a float's trailing zeros.
func number(s string) string {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}

// a is "a string", "an integer".
func a(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}
