package skills

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
)

func TestSlug(t *testing.T) {
	long := slices.Repeat([]string{"mcp__github__create_pull_request"}, 5)
	for _, tt := range []struct {
		tools []string
		want  string
	}{
		{[]string{"Read", "Edit", "Bash"}, "read-edit-bash"},
		{[]string{"mcp__github__search", "WebFetch"}, "mcp-github-search-webfetch"},
	} {
		if got := slug(tt.tools); got != tt.want {
			t.Errorf("slug(%q) = %q, want %q", tt.tools, got, tt.want)
		}
	}
	for _, tools := range [][]string{long, {"→", "Read"}, {"../..", "/etc"}} {
		s := slug(tools)
		if len(s) > maxSlug || s == "" || nonSlug.MatchString(strings.ReplaceAll(s, "-", "")) || strings.HasPrefix(s, "-") {
			t.Errorf("slug(%q) = %q", tools, s)
		}
	}
	if slug([]string{"→", "Read"}) == slug([]string{"←", "Read"}) {
		t.Error("two sequences cut to one slug")
	}
}

func TestObserve(t *testing.T) {
	meta := func(tool string, failed bool) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"tool": tool, "error": failed})
		return b
	}
	turns := []memhost.Turn{
		{Type: "message", Role: "user", Content: "first"},
		{Type: "tool_call", Role: "tool", Content: `tool call: Grep {"x":1}`, Timestamp: "t1"},
		{Type: "tool_result", Role: "tool", Content: "tool result: 3 matches"},
		{Type: "tool_call", Role: "tool", Content: "tool call: Edit {}"},
		{Type: "tool_result", Role: "tool", Content: "tool result: Error: no such file"},
		{Type: "message", Role: "assistant", Content: "done"},
		{Type: "message", Role: "user", Content: "second"},
		{Type: "message", Role: "tool", Metadata: meta("Read", false)},
		{Type: "message", Role: "user", Content: "third"},
		{Type: "message", Role: "tool", Metadata: meta("Read", false)},
		{Type: "message", Role: "tool", Metadata: meta("Read", false)},
		{Type: "message", Role: "tool", Metadata: meta("Bash", true)},
	}
	got := observe("s", turns)
	if len(got) != 2 {
		t.Fatalf("observations: %+v", got)
	}
	if a := got[0]; !slices.Equal(a.tools, []string{"Grep", "Edit"}) || !a.failed || a.context != "first" || a.at != "t1" {
		t.Errorf("first task: %+v", a)
	}
	if b := got[1]; !slices.Equal(b.tools, []string{"Read", "Bash"}) || !b.failed || b.context != "third" {
		t.Errorf("third task (one tool alone is none): %+v", b)
	}
}

// A tool's name is one line however it was sent: a newline in it would
// make a heading (a section of the skill page, a part of the memory
// context) of whatever follows.
func TestToolNamesAreOneLine(t *testing.T) {
	meta := func(tool string) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"tool": tool})
		return b
	}
	turns := []memhost.Turn{
		{Type: "message", Role: "user", Content: "task"},
		{Type: "message", Role: "tool", Metadata: meta("Read\n## Planted\r\n\tsection\x00")},
		{Type: "tool_call", Role: "tool", Content: "tool call: Bash\n# also {}"},
	}
	got := observe("s", turns)
	if len(got) != 1 || !slices.Equal(got[0].tools, []string{"Read ## Planted section", "Bash"}) {
		t.Fatalf("observations: %+v", got)
	}
	sk := memhost.Skill{Name: strings.Join(got[0].tools, " → "), Slug: "read-bash", Tools: got[0].tools}
	page := newPage(pattern{obs: got}, sk, "2026-01-02", time.UTC)
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, "#") && l != "# "+sk.Name && l != "## Steps" && l != "## Seen in" {
			t.Fatalf("a tool name made the heading %q:\n%s", l, page)
		}
	}
}
