package secrets

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFalsePositivesOnDevSets scans every distinct turn of the LoCoMo and
// LongMemEval dev conversations (../shared/bench) and reports the share
// that would be redacted, and what for: real conversations without
// credentials, where the aim is none. About a minute for LongMemEval's
// 28 MB, so it runs only with MEMHOST_SECRETS_FP=1 (the figure is in
// docs/benchmarks.md).
func TestFalsePositivesOnDevSets(t *testing.T) {
	if os.Getenv("MEMHOST_SECRETS_FP") == "" {
		t.Skip("MEMHOST_SECRETS_FP=1 runs it (about a minute)")
	}
	bench := filepath.Join("..", "..", "..", "shared", "bench")
	turns := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(bench, "locomo-dev", "sessions", "*", "*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var turn struct{ Content string }
			if json.Unmarshal(sc.Bytes(), &turn) == nil {
				turns[turn.Content] = true
			}
		}
		fh.Close()
	}
	locomo := len(turns)
	if data, err := os.ReadFile(filepath.Join(bench, "longmemeval-dev", "longmemeval_s_dev.json")); err == nil {
		var qs []struct {
			Haystack [][]struct{ Content string } `json:"haystack_sessions"`
		}
		if err := json.Unmarshal(data, &qs); err != nil {
			t.Fatal(err)
		}
		for _, q := range qs {
			for _, s := range q.Haystack {
				for _, turn := range s {
					turns[turn.Content] = true
				}
			}
		}
	}
	if len(turns) == 0 {
		t.Skip("no dev sets in ../shared/bench")
	}
	s := scanner(t)
	start := time.Now()
	flagged, bytes := 0, 0
	rules := map[string]int{}
	for text := range turns {
		bytes += len(text)
		if f := s.Scan(text); len(f) > 0 {
			flagged++
			for _, x := range f {
				rules[x.Rule]++
			}
		}
	}
	el := time.Since(start)
	t.Logf("%d distinct turns (%d LoCoMo), %.1f MB in %v (%.2f MB/s): %d flagged (%.4f%%), by rule %v",
		len(turns), locomo, float64(bytes)/1e6, el.Round(time.Millisecond), float64(bytes)/1e6/el.Seconds(), flagged, 100*float64(flagged)/float64(len(turns)), rules)
}
