package eval

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
)

// TestEval runs the eval on a tiny set whose answers can be checked by
// hand: keyword search puts each evidence turn first for its question.
func TestEval(t *testing.T) {
	cfg := config.Default()
	cfg.Memory.Embedding.Plugin = "none"
	h, err := host.Open(context.Background(), host.Options{Home: t.TempDir(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r, err := Run(context.Background(), h, Request{Dir: "testdata", K: []int{1, 5}})
	if err != nil {
		t.Fatal(err)
	}
	// 3 questions with evidence (one has none and is not scored). At k=1:
	// q0 finds D1:1; q1 finds one of its two turns (0.5); c2_q0 finds D1:1.
	if r.Queries != 3 || r.Mode != memhost.ModeKeyword || r.Recall["1"] != round3(2.5/3) || r.Recall["5"] != 1 {
		t.Errorf("Eval = %+v", r)
	}
	if r.ByCategory["1"]["1"] != 1 || r.ByCategory["2"]["1"] != 0.5 {
		t.Errorf("by category: %+v", r.ByCategory)
	}
	if r.ByConversation["c1"]["1"] != 0.75 || r.ByConversation["c2"]["1"] != 1 || len(r.ByConversation) != 2 {
		t.Errorf("by conversation: %+v", r.ByConversation)
	}
	if r.Turns != 5 {
		t.Errorf("turns indexed: %d", r.Turns)
	}
	// The memory context of each question holds its evidence but q1's
	// second turn, which scores under the home's min score (0.25): the
	// context is measured as a user gets it, recall@k over everything.
	if c := r.Context; c.Recall != round3(2.5/3) || c.ByCategory["2"] != 0.5 || c.Budget != 5000 || c.PerTier != 20 || c.Turns == 0 || c.Tokens == 0 || c.Tokens > 5000 {
		t.Errorf("context figures: %+v", c)
	}
	if r.Mixed != nil {
		t.Errorf("mixed figures without Mixed: %+v", r.Mixed)
	}
	// Each home also holds the other conversation as a daily page: the
	// same questions find the same turns.
	m, err := Run(context.Background(), h, Request{Dir: "testdata", K: []int{1, 5}, Mixed: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Mixed == nil || m.Mixed.DailyPages != 2 || m.Mixed.DailyChunks == 0 {
		t.Fatalf("mixed: %+v", m.Mixed)
	}
	if !reflect.DeepEqual(m.Mixed.Recall, r.Recall) || !reflect.DeepEqual(m.Mixed.ByCategory, r.ByCategory) || !reflect.DeepEqual(m.Recall, r.Recall) {
		t.Errorf("mixed %+v / %+v, clean %+v / %+v", m.Mixed.Recall, m.Mixed.ByCategory, r.Recall, r.ByCategory)
	}
	if _, err := Run(context.Background(), h, Request{Dir: t.TempDir()}); err == nil {
		t.Error("eval of an empty folder succeeded")
	}
}

func TestEvidenceRecall(t *testing.T) {
	tests := []struct {
		evidence, ranked []string
		k                int
		want             float64
	}{
		{[]string{"a"}, []string{"a", "b"}, 1, 1},
		{[]string{"a", "b"}, []string{"a", "c", "b"}, 2, 0.5},
		{[]string{"a", "b"}, []string{"c", "c", "a", "b"}, 4, 1},
		{[]string{"a"}, nil, 5, 0},
		{nil, []string{"a"}, 5, 0},
	}
	for _, tt := range tests {
		if got := evidenceRecall(tt.evidence, tt.ranked, tt.k); got != tt.want {
			t.Errorf("evidenceRecall(%v, %v, %d) = %v, want %v", tt.evidence, tt.ranked, tt.k, got, tt.want)
		}
	}
}

// TestDailyEntry: a session becomes a daily-log entry of its first turn's
// day, a line a turn with the speaker's name.
func TestDailyEntry(t *testing.T) {
	day, entry, err := dailyEntry(filepath.Join("testdata", "sessions", "c2", "session_01.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := "## 10:00 — talk between Cy and Di\n\nCy: The garden tomatoes are ripe.\nDi: Lisbon was lovely in spring.\n"
	if day != "2023-06-01" || entry != want {
		t.Errorf("dailyEntry = %q, %q", day, entry)
	}
	bad := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(bad, []byte("{not json\n"), 0o644)
	if _, _, err := dailyEntry(bad); err == nil || !strings.Contains(err.Error(), "s.jsonl:1") {
		t.Errorf("a bad line: %v", err)
	}
}
