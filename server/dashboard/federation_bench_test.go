package dashboard_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memhost/memhost/server/dashboard"
)

// BenchmarkHomeFederation measures what the git sync card adds to the
// home's first paint: the home (the handler, request to last byte) of a
// federated home with one conflict and of a home without git, both with
// the same two pages, and Host.FederationSummary alone (a git rev-parse
// and a read of .git/memhost/state.json).
// docs/benchmarks.md has the figures.
func BenchmarkHomeFederation(b *testing.B) {
	homeA, _, _ := conflictHomes(b)
	h := openFedHost(b, homeA, "a <a@test>")
	defer h.Close()
	d := dashboard.New(h)
	b.Run("home", func(b *testing.B) {
		for range b.N {
			if code, body := fetchUI(b, d, "/"); code != 200 || len(body) == 0 {
				b.Fatalf("GET /: %d", code)
			}
		}
	})
	plain := openFedHost(b, b.TempDir(), "")
	defer plain.Close()
	os.MkdirAll(filepath.Join(plain.NotebookDir(), "knowledge"), 0o755)
	for _, p := range []string{"decision.md", "decision.conflict-12345678.md"} {
		os.WriteFile(filepath.Join(plain.NotebookDir(), "knowledge", p), []byte(decisionA), 0o644)
	}
	dp := dashboard.New(plain)
	b.Run("home-without-git", func(b *testing.B) {
		for range b.N {
			if code, body := fetchUI(b, dp, "/"); code != 200 || len(body) == 0 {
				b.Fatalf("GET /: %d", code)
			}
		}
	})
	b.Run("summary", func(b *testing.B) {
		for range b.N {
			if fs := h.FederationSummary(context.Background()); fs == nil || len(fs.Conflicts) != 1 {
				b.Fatalf("summary: %+v", fs)
			}
		}
	})
}
