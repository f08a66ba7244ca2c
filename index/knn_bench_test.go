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
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("memhost-knn-schema%s-%d-%d.db", schemaVersion, n, dims))
	if _, err := os.Stat(path + ".complete"); err != nil {
		os.Remove(path)
		db, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewSource(1))
		for start := 0; start < n; start += 1000 {
			var batch Batch
			for i := start; i < min(n, start+1000); i++ {
				batch.Upserts = append(batch.Upserts, page(fmt.Sprintf("p%06d.md", i), fmt.Sprintf("chunk %d", i)))
			}
			if err := db.Apply(ctx, batch); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := db.SetVectorModel(ctx, VectorModel{Provider: "rand", Model: "rand", Dimensions: dims}); err != nil {
			b.Fatal(err)
		}
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
