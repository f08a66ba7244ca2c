package eval

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
)

func keywordHost(t *testing.T) *host.Host {
	t.Helper()
	cfg := config.Default()
	cfg.Memory.Embedding.Plugin = "none"
	h, err := host.Open(context.Background(), host.Options{Home: t.TempDir(), Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// TestLongMemEval runs the eval on a file of four questions whose rankings
// can be worked out by hand, keyword-only.
func TestLongMemEval(t *testing.T) {
	h := keywordHost(t)
	path := filepath.Join("testdata", "longmemeval.json")
	var seen []Progress
	r, err := RunLongMemEval(context.Background(), h, LongMemEvalRequest{Path: path, Progress: func(p Progress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	// q3_abs is skipped; q1, q2 (its answer ids a string holding a JSON
	// list) and q4 are asked.
	if r.Questions != 3 || r.Abstention != 1 || r.Mode != memhost.ModeKeyword || r.Sessions != 9 || r.Turns == 0 {
		t.Fatalf("LongMemEval = %+v", r)
	}
	if len(seen) != 4 || seen[0].Done != 0 || seen[0].Hybrid || seen[3].Done != 3 || seen[3].Total != 3 || seen[3].Left != 0 {
		t.Errorf("progress: %+v", seen)
	}
	// q1: the bicycle session first. q2: its two answer sessions first
	// (all found at 3, not at 1). q4: the lemon cake of last Saturday
	// (2023-11-04) outranks the chocolate cake of October, which says
	// "cake" three times: the window lifts it.
	want := map[string]map[string]float64{
		"single-session-user": {"any1": 1, "all1": 1, "turn1": 1},
		"multi-session":       {"any1": 1, "all1": 0, "all3": 1, "ndcg1": 1, "turn1": 1},
		"temporal-reasoning":  {"any1": 1, "all1": 1, "turn1": 1},
	}
	for ty, w := range want {
		f, ok := r.ByType[ty]
		if !ok || f.Questions != 1 {
			t.Fatalf("%s: %+v", ty, r.ByType)
		}
		got := map[string]float64{"any1": f.RecallAny["1"], "all1": f.RecallAll["1"], "turn1": f.TurnAny["1"]}
		if _, ok := w["all3"]; ok {
			got["all3"], got["ndcg1"] = f.RecallAll["3"], f.NDCG["1"]
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %v, want %v (%+v)", ty, got, w, f)
		}
	}
	if r.Overall.RecallAny["1"] != 1 || r.Overall.RecallAll["1"] != round3(2.0/3) || r.Overall.TurnShare["1"] != round3(2.5/3) {
		t.Errorf("overall: %+v", r.Overall)
	}
	if r.Windows != 1 {
		t.Errorf("windows: %d, want 1 (q4's last Saturday)", r.Windows)
	}
	if r.SearchMs.Median <= 0 || r.SearchMs.P95 < r.SearchMs.Median {
		t.Errorf("search times: %+v", r.SearchMs)
	}

	// Types and a sample choose the questions.
	r, err = RunLongMemEval(context.Background(), h, LongMemEvalRequest{Path: path, Types: []string{"multi-session", "temporal-reasoning"}})
	if err != nil || r.Questions != 2 || r.Abstention != 0 || len(r.ByType) != 2 {
		t.Errorf("types: %+v, %v", r, err)
	}
	a, err := RunLongMemEval(context.Background(), h, LongMemEvalRequest{Path: path, Sample: 2, Seed: 7})
	if err != nil || a.Questions != 2 {
		t.Fatalf("sample: %+v, %v", a, err)
	}
	b, _ := RunLongMemEval(context.Background(), h, LongMemEvalRequest{Path: path, Sample: 2, Seed: 7})
	if !reflect.DeepEqual(keysOf(a.ByType), keysOf(b.ByType)) {
		t.Errorf("one seed, two samples: %v, %v", keysOf(a.ByType), keysOf(b.ByType))
	}
	if _, err := RunLongMemEval(context.Background(), h, LongMemEvalRequest{Path: path, Types: []string{"knowledge-update"}}); err == nil || !strings.Contains(err.Error(), `"knowledge-update"`) {
		t.Errorf("an unknown type: %v", err)
	}
}

func keysOf(m map[string]LMEFigures) []string { return slices.Sorted(maps.Keys(m)) }

// TestLongMemEvalBadInput: a file that is neither layout, or a question
// that cannot be asked, is one error naming the file and the problem.
func TestLongMemEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := `{"question_id":"x","question_type":"t","question":"q?","question_date":"2023/05/30 (Tue) 10:18","answer_session_ids":["a"],"haystack_dates":["2023/05/01 (Mon) 09:00"],"haystack_session_ids":["a"],"haystack_sessions":[[{"role":"user","content":"hi"}]]}`
	tests := []struct {
		name, body, want string
	}{
		{"notes.txt", "hello", "not an eval set"},
		{"obj.json", `{"question_id": "x"}`, "not an eval set"},
		{"empty.json", "  \n", "empty"},
		{"dates.json", "[" + strings.Replace(good, `"haystack_dates":["2023/05/01 (Mon) 09:00"]`, `"haystack_dates":[]`, 1) + "]", "question 1 (x): 0 haystack_dates for 1 haystack_session_ids"},
		{"date.json", "[" + strings.Replace(good, `"2023/05/30 (Tue) 10:18"`, `"yesterday"`, 1) + "]", `question 1 (x): question_date "yesterday"`},
		{"noanswer.json", "[" + strings.Replace(good, `"answer_session_ids":["a"]`, `"answer_session_ids":[]`, 1) + "]", "no answer_session_ids"},
		{"str.json", "[" + strings.Replace(good, `"answer_session_ids":["a"]`, `"answer_session_ids":"['a']"`, 1) + "]", "does not hold a JSON list"},
		{"trunc.json", "[" + good + ",{", "question 2"},
	}
	h := keywordHost(t)
	for _, tt := range tests {
		p := write(tt.name, tt.body)
		_, err := Detect(p)
		if err == nil {
			_, err = RunLongMemEval(context.Background(), h, LongMemEvalRequest{Path: p})
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), p) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming the file and %q", tt.name, err, tt.want)
		}
	}
	if l, err := Detect(filepath.Join("testdata", "longmemeval.json")); l != LayoutLongMemEval || err != nil {
		t.Errorf("Detect(file) = %q, %v", l, err)
	}
	if l, err := Detect("testdata"); l != LayoutDir || err != nil {
		t.Errorf("Detect(dir) = %q, %v", l, err)
	}
	if _, err := Detect(dir); err == nil || !strings.Contains(err.Error(), "queries.jsonl") {
		t.Errorf("Detect(a folder of other files) = %v", err)
	}
}

// TestSessionMeasures checks the measures on rankings worked out by hand.
func TestSessionMeasures(t *testing.T) {
	log2 := math.Log2
	tests := []struct {
		gold, ranked   []string
		k              int
		any, all, ndcg float64
	}{
		{[]string{"a"}, []string{"a", "b"}, 1, 1, 1, 1},
		{[]string{"a"}, []string{"b", "a"}, 1, 0, 0, 0},
		{[]string{"a"}, []string{"b", "a"}, 3, 1, 1, 1 / log2(3)},
		{[]string{"a", "b"}, []string{"x", "a", "b"}, 2, 1, 0, (1 / log2(3)) / (1 + 1/log2(3))},
		{[]string{"a", "b"}, []string{"x", "a", "b"}, 3, 1, 1, (1/log2(3) + 1/log2(4)) / (1 + 1/log2(3))},
		{[]string{"a", "b"}, []string{"b", "x", "y", "z", "a"}, 1, 1, 0, 1}, // one of two at rank 1: ideal at k=1 is one
		{[]string{"a", "b"}, []string{"b", "x", "y", "z", "a"}, 5, 1, 1, (1 + 1/log2(6)) / (1 + 1/log2(3))},
		{[]string{"a"}, nil, 5, 0, 0, 0},
		{nil, []string{"a"}, 5, 0, 0, 0},
	}
	for _, tt := range tests {
		if got := recallAny(tt.gold, tt.ranked, tt.k); got != tt.any {
			t.Errorf("recallAny(%v, %v, %d) = %v, want %v", tt.gold, tt.ranked, tt.k, got, tt.any)
		}
		if got := recallAll(tt.gold, tt.ranked, tt.k); got != tt.all {
			t.Errorf("recallAll(%v, %v, %d) = %v, want %v", tt.gold, tt.ranked, tt.k, got, tt.all)
		}
		if got := ndcg(tt.gold, tt.ranked, tt.k); math.Abs(got-tt.ndcg) > 1e-12 {
			t.Errorf("ndcg(%v, %v, %d) = %v, want %v", tt.gold, tt.ranked, tt.k, got, tt.ndcg)
		}
	}
}

// TestLMERanking: sessions come in the order of their best turn, each
// once, a repeated session's file counting as its published id; turns a
// place each.
func TestLMERanking(t *testing.T) {
	results := []memhost.TurnResult{
		{Session: "s2", Turns: []string{"3"}},
		{Session: "s1", Turns: []string{"1", "2"}},
		{Session: "s2", Turns: []string{"1"}},
		{Session: "s1.2", Turns: []string{"4"}},
		{Session: "s3", Turns: []string{"2"}},
	}
	sessions, turns := lmeRanking(results, map[string]string{"s1": "s1", "s1.2": "s1", "s2": "s2", "s3": "s3"})
	if want := []string{"s2", "s1", "s3"}; !reflect.DeepEqual(sessions, want) {
		t.Errorf("sessions %v, want %v", sessions, want)
	}
	if want := []string{"s2/3", "s1/1", "s1/2", "s2/1", "s1.2/4", "s3/2"}; !reflect.DeepEqual(turns, want) {
		t.Errorf("turns %v, want %v", turns, want)
	}
	q := &lmeQuestion{HaystackSessionIDs: []string{"s1", "s2", "s1", "s1"}}
	if got, want := lmeFileIDs(q), []string{"s1", "s2", "s1.2", "s1.3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("file ids %v, want %v", got, want)
	}
}

func TestPercentiles(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	if got := percentiles(xs); got != (Percentiles{Median: 10, P95: 19}) {
		t.Errorf("percentiles = %+v", got)
	}
	if got := percentiles([]float64{3}); got != (Percentiles{Median: 3, P95: 3}) {
		t.Errorf("one: %+v", got)
	}
}
