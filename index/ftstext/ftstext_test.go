package ftstext

import "testing"

func TestMatchExpr(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Sarah phone", `"sarah" OR "phone"`},
		{"what is Sarah's phone?", `"sarah" OR "phone"`},
		{"the", `"the"`}, // only stop words: keep them
		{`a"b`, `"b"`},   // lone letter dropped, quote never reaches FTS5
		{"咖啡", `"咖啡"`},
		{"喜欢喝咖啡", `"喜欢 欢喝 喝咖 咖啡"`},
		{"茶", `"茶"*`},
		{"东京tower", `"东京" OR "tower"`},
		{"", ""},
		{"!!!", ""},
	}
	for _, tt := range tests {
		if got := MatchExpr(tt.in); got != tt.want {
			t.Errorf("MatchExpr(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestSegment(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text", "plain text"},
		{"我喜欢", " 我喜 喜欢 欢 "},
		{"a東京b", "a 東京 京 b"},
		{"茶", " 茶 "},
	}
	for _, tt := range tests {
		if got := Segment(tt.in); got != tt.want {
			t.Errorf("Segment(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
