package filemerge

import (
	"strings"
	"testing"
)

func TestMergeJSONL(t *testing.T) {
	base := `{"id":"1"}` + "\n"
	ours := base + `{"id":"2","x":1}` + "\n" + "not json\n"
	theirs := base + `{"id":"3"}` + "\n" + `{"id":"2","x":1}` + "\n"
	got := string(JSONL([]byte(base), []byte(ours), []byte(theirs)))
	want := `{"id":"1"}` + "\n" + `{"id":"2","x":1}` + "\nnot json\n" + `{"id":"3"}` + "\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestUnionLines(t *testing.T) {
	for _, tc := range []struct{ o, t, want string }{
		{"# C\n\n## S\n- phone\n- acme\n", "# C\n\n## S\n- acme\n", "# C\n\n## S\n- phone\n- acme\n"},
		{"a\nb\n", "a\nc\n", "a\nb\nc\n"},
		{"", "x\n", "x\n"},
		{"# D\n\n## 10:00 a\n", "# D\n\n## 10:05 b\n", "# D\n\n## 10:00 a\n## 10:05 b\n"},
	} {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
		}
		o, tt := split(tc.o), split(tc.t)
		for _, l := range [][]string{o, tt} {
			if len(l) > 0 {
				l[len(l)-1] += "\n"
			}
		}
		if got := strings.Join(unionLines(o, tt), ""); got != tc.want {
			t.Errorf("union(%q, %q) = %q, want %q", tc.o, tc.t, got, tc.want)
		}
	}
}
