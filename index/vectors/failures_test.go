package vectors

import (
	"context"
	"testing"

	"github.com/memhost/memhost/index"
)

func TestEmbedFailures(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	if err := db.Apply(ctx, index.Batch{Upserts: []index.Update{page("a.md", "one", "two", "three")}}); err != nil {
		t.Fatal(err)
	}
	pendingIDs := func() []string {
		q, err := db.PendingLive(ctx, 10, "m", 2)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range q {
			out = append(out, c.Hash)
		}
		return out
	}
	counts := func(wantPending, wantDead int) {
		t.Helper()
		p, d, err := db.QueueCounts(ctx, "m", 2)
		if err != nil || p != wantPending || d != wantDead {
			t.Fatalf("QueueCounts = %d, %d, %v; want %d, %d", p, d, err, wantPending, wantDead)
		}
	}
	counts(3, 0)
	if got := pendingIDs(); len(got) != 3 {
		t.Fatalf("pending = %v", got)
	}
	for range 2 {
		if err := db.RecordFailures(ctx, "m", []string{"two"}, "bad input"); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.RecordFailures(ctx, "other", []string{"one"}, "x"); err != nil {
		t.Fatal(err)
	}
	counts(2, 1)
	if got := pendingIDs(); len(got) != 2 || got[0] != "one" || got[1] != "three" {
		t.Fatalf("pending after two failures of %q = %v", "two", got)
	}
	dead, err := db.DeadChunks(ctx, "m", 2, 10)
	if err != nil || len(dead) != 1 || dead[0].Failures != 2 || dead[0].LastError != "bad input" || dead[0].Path != "a.md" {
		t.Fatalf("DeadChunks = %+v, %v", dead, err)
	}
	// Under another model nothing is dead.
	if p, d, _ := db.QueueCounts(ctx, "other", 2); p != 3 || d != 0 {
		t.Fatalf("QueueCounts(other) = %d, %d", p, d)
	}
	if live, err := db.HasLivePending(ctx, "m", 2); err != nil || !live {
		t.Fatalf("HasLivePending = %v, %v", live, err)
	}
	n, err := db.ClearFailures(ctx, "m", 2)
	if err != nil || n != 1 {
		t.Fatalf("ClearFailures = %d, %v", n, err)
	}
	counts(3, 0)
}
