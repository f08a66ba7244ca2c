package markdown

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name, page string
		want       Frontmatter
		wantErr    string
	}{
		{name: "none", page: "# Title\n", want: Frontmatter{}},
		{name: "not first line", page: "\n---\ntitle: x\n---\n", want: Frontmatter{}},
		{name: "never closed", page: "---\ntitle: x\n# Body\n", want: Frontmatter{}},
		{name: "empty", page: "---\n---\n# Body\n", want: Frontmatter{Lines: 2}},
		{
			name: "lists",
			page: "---\ntitle: Sarah Chen\naliases: [Sarah, S. Chen]\ntags:\n  - Person\n  - '#team/design'\ncreated: 2026-03-02\nupdated: 2026-03-02T10:30:00Z\nrating: 4\n---\n# Sarah\n",
			want: Frontmatter{Lines: 10, Title: "Sarah Chen", Aliases: []string{"Sarah", "S. Chen"},
				Tags:  []string{"person", "team/design"},
				Dates: map[string]string{"created": "2026-03-02", "updated": "2026-03-02T10:30:00Z"},
				Keys:  []string{"title", "aliases", "tags", "created", "updated", "rating"}},
		},
		{
			name: "strings",
			page: "---\nalias: Alpha, The Project\ntag: project, project/alpha #Launch\n---\n",
			want: Frontmatter{Lines: 4, Aliases: []string{"Alpha", "The Project"}, Tags: []string{"project", "project/alpha"}, // " #Launch" is a YAML comment
				Keys: []string{"alias", "tag"}},
		},
		{name: "CRLF", page: "---\r\ntitle: Win\r\n---\r\nbody\r\n", want: Frontmatter{Lines: 3, Title: "Win", Keys: []string{"title"}}},
		{name: "bad YAML", page: "---\ntitle: [unclosed\n---\n", want: Frontmatter{Lines: 3}, wantErr: "frontmatter"},
		{name: "not a mapping", page: "---\n- a\n- b\n---\n", want: Frontmatter{Lines: 4}, wantErr: "not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFrontmatter(tt.page)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			got.Fields = nil // checked below
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
	fm, _ := ParseFrontmatter("---\nstatus: active\nrating: 4\n---\n")
	if fm.Fields["status"] != "active" || fm.Fields["rating"] != 4 {
		t.Fatalf("fields = %#v", fm.Fields)
	}
}

func TestSplitFrontmatter(t *testing.T) {
	for _, tt := range []struct{ page, front, body string }{
		{"# x\n", "", "# x\n"},
		{"---\na: 1\n---\n# x\n", "---\na: 1\n---\n", "# x\n"},
		{"---\r\na: 1\r\n---\r\n# x\r\n", "---\r\na: 1\r\n---\r\n", "# x\r\n"},
		{"---\na: 1\n---", "---\na: 1\n---", ""},
	} {
		front, body := SplitFrontmatter(tt.page)
		if front != tt.front || body != tt.body {
			t.Fatalf("SplitFrontmatter(%q) = %q, %q; want %q, %q", tt.page, front, body, tt.front, tt.body)
		}
	}
}

func TestLinks(t *testing.T) {
	page := strings.Join([]string{
		"---",
		"related: \"[[In Frontmatter]]\"",
		"---",
		"See [[Sarah Chen]], [[Project Alpha#Design reviews|the notes]] and ![[whiteboard.png]].",
		"`[[in code]]` then [[ spaced | Alias ]] and [[#Local heading]]",
		"```",
		"[[fenced]]",
		"```",
		"| a | [[table\\|shown]] |",
		"[[a [[nested]] b",
	}, "\n")
	got := Links(Lines(page))
	for _, l := range got {
		line := Lines(page)[l.Line-1]
		if !strings.HasPrefix(line[l.Start:], "[[") || !strings.HasSuffix(line[:l.End], "]]") {
			t.Fatalf("link %+v: offsets do not frame it in %q", l, line)
		}
	}
	for i := range got {
		got[i].Start, got[i].End, got[i].PathStart, got[i].PathEnd = 0, 0, 0, 0
	}
	want := []Link{
		{Target: "Sarah Chen", Line: 4},
		{Target: "Project Alpha", Heading: "Design reviews", Alias: "the notes", Line: 4},
		{Target: "whiteboard.png", Embed: true, Line: 4},
		{Target: "spaced", Alias: "Alias", Line: 5},
		{Target: "table", Alias: "shown", Line: 9},
		{Target: "nested", Line: 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %+v\nwant %+v", got, want)
	}
}

func TestInlineTags(t *testing.T) {
	page := strings.Join([]string{
		"---",
		"tags: [fm]",
		"# yaml comment #notag",
		"---",
		"# Heading #HeadTag",
		"#start of line, mid #Project/Alpha, #2026 is a number, a#b is not, #v2 is",
		"[[page#heading]] and `#code` and url http://x.org/#frag",
		"```",
		"#fenced",
		"```",
		"unicode #café-notes and #日本",
	}, "\n")
	var got []string
	for _, tg := range InlineTags(Lines(page)) {
		got = append(got, tg.Name)
	}
	want := []string{"headtag", "start", "project/alpha", "v2", "café-notes", "日本"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
