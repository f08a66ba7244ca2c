package episodes

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
)

// BenchmarkEpisodesDay writes one day's page in a home of 200 transcripts
// of 500 messages each (100,000 turns over 50 days), as a session's end
// does in a running server: once the transcripts' days are known (the
// first run reads every one), only the day's four are read.
func BenchmarkEpisodesDay(b *testing.B) {
	es, k := newHome(b, "UTC")
	start := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	for s := range 200 {
		var lines strings.Builder
		for i := range 500 {
			at := start.Add(time.Duration(s%50)*24*time.Hour + time.Duration(i)*time.Minute)
			line, _ := json.Marshal(memhost.Turn{ID: fmt.Sprint(i), Type: "message", Role: []string{"user", "assistant"}[i%2],
				Content: fmt.Sprintf("message %d of session %d about the staging database and the release", i, s), Timestamp: at.Format(time.RFC3339)})
			lines.Write(line)
			lines.WriteByte('\n')
		}
		if err := os.WriteFile(filepath.Join(k.store.Dir, fmt.Sprintf("s%03d.jsonl", s)), []byte(lines.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := es.Episodes(context.Background(), memhost.EpisodesRequest{Date: "2026-01-10"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := es.Episodes(context.Background(), memhost.EpisodesRequest{Date: "2026-01-10"}); err != nil {
			b.Fatal(err)
		}
	}
}
