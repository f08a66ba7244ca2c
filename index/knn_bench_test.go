package index

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// knnDB builds (once per schema version, in the temp folder) an index of n one-chunk pages
// with random unit vectors of dims dimensions.
func knnDB(b *testing.B, n, dims int) *DB {
	return vecDB(b, fmt.Sprintf("%d-%d", n, dims), dims, func(add func(Update)) {
		for i := range n {
			add(page(fmt.Sprintf("p%06d.md", i), fmt.Sprintf("chunk %d", i)))
		}
	})
}

// mixedDB builds a home of 100k chunks of 384 dimensions where sessions
// are the bulk, as for an agent that has run for a while: 30k notebook
// chunks (pages of 10), 10k daily (days of 10), 60k sessions (one of
// 2,000 turns, "sessions/big.jsonl", and 290 of 200, "sessions/s0000.jsonl"...).
func mixedDB(b *testing.B) *DB {
	return vecDB(b, "mixed-100000-384", 384, func(add func(Update)) {
		file := func(path, source string, chunks int) {
			u := page(path)
			u.File.Source = source
			for i := range chunks {
				text := fmt.Sprintf("%s %d", path, i)
				u.Chunks = append(u.Chunks, Chunk{StartLine: i + 1, EndLine: i + 1, Text: text, Hash: text})
			}
			add(u)
		}
		for i := range 3000 {
			file(fmt.Sprintf("notes/p%04d.md", i), "notebook", 10)
		}
		for i := range 1000 {
			file(fmt.Sprintf("daily/d%04d.md", i), "daily", 10)
		}
		file("sessions/big.jsonl", "sessions", 2000)
		for i := range 290 {
			file(fmt.Sprintf("sessions/s%04d.jsonl", i), "sessions", 200)
		}
	})
}

// vecDB builds (once per schema version, in the temp folder) the index of
// the files updates adds, with random unit vectors of dims dimensions.
func vecDB(b *testing.B, name string, dims int, updates func(add func(Update))) *DB {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("memhost-knn-schema%s-%s.db", schemaVersion, name))
	if _, err := os.Stat(path + ".complete"); err != nil {
		os.Remove(path)
		db, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		var batch Batch
		chunks := 0
		flush := func() {
			if err := db.Apply(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch, chunks = Batch{}, 0
		}
		updates(func(u Update) {
			batch.Upserts = append(batch.Upserts, u)
			if chunks += len(u.Chunks); chunks >= 1000 {
				flush()
			}
		})
		flush()
		if _, err := db.SetVectorModel(ctx, VectorModel{Provider: "rand", Model: "rand", Dimensions: dims}); err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewSource(1))
		for {
			pending, err := db.Pending(ctx, 2000)
			if err != nil {
				b.Fatal(err)
			}
			if len(pending) == 0 {
				break
			}
			vecs := make([]ChunkVector, len(pending))
			for i, p := range pending {
				vecs[i] = ChunkVector{p.ID, randomUnit(r, dims)}
			}
			if _, err := db.PutVectors(ctx, "rand", vecs); err != nil {
				b.Fatal(err)
			}
		}
		db.Close()
		os.WriteFile(path+".complete", nil, 0o644)
	}
	db, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

func randomUnit(r *rand.Rand, dims int) []float32 {
	v := make([]float32, dims)
	var n float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// BenchmarkKNN: the vector half of a hybrid recall, at 10k and 100k chunks
// of 384 dimensions (MiniLM's size), k = 60.
func BenchmarkKNN(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			db := knnDB(b, n, 384)
			timeQueries(b, func(ctx context.Context, r *rand.Rand, q []float32) {
				hits, err := db.SearchVectors(ctx, q, 60, nil, "")
				if err != nil || len(hits) != 60 {
					b.Fatalf("%d hits, %v", len(hits), err)
				}
			})
		})
	}
}

// BenchmarkKNNFiltered: the vector half of a recall limited to sources or
// to one file, k = 60, in mixedDB. hits is the mean number of hits: below
// 60 means the filter lost neighbours.
func BenchmarkKNNFiltered(b *testing.B) {
	db := mixedDB(b)
	for _, bm := range []struct {
		name    string
		sources []string
		path    string
		want    int
	}{
		{"all", nil, "", 60},
		{"notebook+daily", []string{"notebook", "daily"}, "", 60},
		{"sessions", []string{"sessions"}, "", 60},
		{"session-200", []string{"sessions"}, "sessions/s0100.jsonl", 60},
		{"session-2000", []string{"sessions"}, "sessions/big.jsonl", 60},
	} {
		b.Run(bm.name, func(b *testing.B) {
			n, queries := 0, 0
			timeQueries(b, func(ctx context.Context, r *rand.Rand, q []float32) {
				hits, err := db.SearchVectors(ctx, q, 60, bm.sources, bm.path)
				if err != nil || len(hits) > bm.want {
					b.Fatalf("%d hits, %v", len(hits), err)
				}
				n, queries = n+len(hits), queries+1
			})
			b.ReportMetric(float64(n)/float64(queries), "hits")
		})
	}
}

// BenchmarkSimilarities: the cosine of a query to 50 given chunks (keyword
// hits the neighbour search did not reach), at 100k chunks.
func BenchmarkSimilarities(b *testing.B) {
	db := knnDB(b, 100000, 384)
	timeQueries(b, func(ctx context.Context, r *rand.Rand, q []float32) {
		ids := make([]int64, 50) // distinct, spread over the table
		for i := range ids {
			ids[i] = 1 + int64(i)*1999 + r.Int63n(1999)
		}
		sims, err := db.Similarities(ctx, q, ids)
		if err != nil || len(sims) != len(ids) {
			b.Fatalf("%d similarities, %v", len(sims), err)
		}
	})
}

// timeQueries runs query with 50 random unit vectors of 384 dimensions per
// iteration and reports the p50 and p95 times.
func timeQueries(b *testing.B, query func(context.Context, *rand.Rand, []float32)) {
	r := rand.New(rand.NewSource(2))
	ctx := context.Background()
	var ds []time.Duration
	b.ResetTimer()
	for range b.N {
		for range 50 {
			q := randomUnit(r, 384)
			start := time.Now()
			query(ctx, r, q)
			ds = append(ds, time.Since(start))
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds())/1000, "p95-ms")
}
