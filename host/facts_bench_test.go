package host

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/host/recall"
	"github.com/memhost/memhost/index/factrows"
	"github.com/memhost/memhost/knowledge"
)

// BenchmarkFacts: 1,000 entity pages of 10 current facts each (10,000
// facts; four attributes of ten also have a superseded value, 4,000
// more rows of history; every fact a wikilink to another entity in one case in
// five). Reports the index's size with the pages as entity pages against
// the same pages outside knowledge/entities/ (what the facts tables
// cost), the time to index them, and the latency of the facts queries:
// one entity's current facts (through Host.Facts, with its stale check,
// and the bare query), every current fact, and recall's FACTS search.
func BenchmarkFacts(b *testing.B) {
	const entities, perEntity = 1000, 10
	ctx := context.Background()
	r := rand.New(rand.NewPCG(16, 10))
	words := []string{"acme", "robotics", "design", "tea", "hiking", "berlin", "golang", "postgres", "manager", "review",
		"garden", "piano", "cycling", "london", "kotlin", "sqlite", "budget", "launch", "travel", "coffee"}
	phrase := func() string {
		return words[r.IntN(len(words))] + " " + words[r.IntN(len(words))] + fmt.Sprintf(" %d", r.IntN(1000))
	}
	pages := map[string][]byte{}
	for i := range entities {
		slug := fmt.Sprintf("entity-%04d", i)
		p := facts.New(slug, fmt.Sprintf("Entity %d", i), "2026-01-01")
		for j := range perEntity {
			attr := fmt.Sprintf("attribute %d", j)
			if j%3 == 0 {
				if _, err := p.Add(facts.Addition{Attribute: attr, Value: phrase(), Source: "chat-1 turn 0123456789ab"}, "2026-01-01"); err != nil {
					b.Fatal(err)
				}
			}
			v := phrase()
			if r.IntN(5) == 0 {
				v = fmt.Sprintf("[[entity-%04d]]", r.IntN(entities))
			}
			if _, err := p.Add(facts.Addition{Attribute: attr, Value: v, Source: "daily/2026-01-02.md line 4", Confidence: 0.9}, "2026-01-02"); err != nil {
				b.Fatal(err)
			}
		}
		pages[slug] = p.Bytes()
	}
	home := func(dir string) (*Host, time.Duration, int64) {
		root := b.TempDir()
		h := openBenchHome(b, root)
		for slug, data := range pages {
			p := filepath.Join(h.NotebookDir(), dir, slug+".md")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		start := time.Now()
		if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		// Closed, the index is checkpointed into its one file.
		h.Close()
		fi, err := os.Stat(filepath.Join(root, "brain", "memory.db"))
		if err != nil {
			b.Fatal(err)
		}
		return openBenchHome(b, root), took, fi.Size()
	}
	_, plainTook, plainSize := home("knowledge/plain")
	h, took, size := home(facts.Dir)
	fs, err := h.idx.Facts().Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if fs.Current != entities*perEntity || fs.Entities != entities {
		b.Fatalf("indexed %+v, want %d current facts of %d entities", fs, entities*perEntity, entities)
	}
	b.ReportMetric(float64(fs.Facts), "fact-rows")
	b.ReportMetric(float64(fs.Relations), "relations")
	b.ReportMetric(float64(size)/(1<<20), "index-MB")
	b.ReportMetric(float64(size-plainSize)/(1<<20), "facts-tables-MB")
	b.ReportMetric(float64(took.Milliseconds()), "index-ms")
	b.ReportMetric(float64((took - plainTook).Milliseconds()), "facts-extra-index-ms")

	measure := func(name string, n int, fn func(i int) error) {
		ds := make([]time.Duration, n)
		for i := range n {
			start := time.Now()
			if err := fn(i); err != nil {
				b.Fatal(err)
			}
			ds[i] = time.Since(start)
		}
		percentiles(b, ds, name+"-")
	}
	for range b.N {
		measure("facts-entity", 300, func(i int) error {
			_, err := h.Facts(ctx, knowledge.FactsRequest{Entity: fmt.Sprintf("entity-%04d", r.IntN(entities))})
			return err
		})
		measure("facts-entity-query", 300, func(i int) error {
			rows, err := h.idx.Facts().List(ctx, factrows.Query{Entity: fmt.Sprintf("entity-%04d", r.IntN(entities))})
			if err == nil && len(rows) != perEntity {
				err = fmt.Errorf("%d facts, want %d", len(rows), perEntity)
			}
			return err
		})
		measure("facts-entity-history-query", 300, func(i int) error {
			_, err := h.idx.Facts().List(ctx, factrows.Query{Entity: fmt.Sprintf("entity-%04d", r.IntN(entities)), History: true})
			return err
		})
		measure("facts-all-query", 20, func(i int) error {
			rows, err := h.idx.Facts().List(ctx, factrows.Query{})
			if err == nil && len(rows) != entities*perEntity {
				err = fmt.Errorf("%d facts, want %d", len(rows), entities*perEntity)
			}
			return err
		})
		measure("search-facts", 300, func(i int) error {
			_, err := h.idx.Facts().Search(ctx, words[r.IntN(len(words))]+" "+words[r.IntN(len(words))], recall.MaxRecallFacts)
			return err
		})
		measure("entities-query", 20, func(i int) error {
			_, err := h.idx.Facts().Entities(ctx)
			return err
		})
		measure("context", 20, func(i int) error {
			_, err := h.Context(ctx, memhost.ContextRequest{})
			return err
		})
		measure("fact-add", 50, func(i int) error {
			_, err := h.FactAdd(ctx, knowledge.FactAddRequest{Entity: fmt.Sprintf("entity-%04d", r.IntN(entities)), Attribute: "attribute 1", Value: phrase()})
			return err
		})
	}
}

func openBenchHome(b *testing.B, home string) *Host {
	h, err := Open(context.Background(), Options{Home: home, Config: config.Default()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	return h
}
