package vectors

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/memhost/memhost/index"
)

// knnDB builds (once per schema version, in the temp folder) an index of n one-chunk pages
// with random unit vectors of dims dimensions.
func knnDB(b *testing.B, n, dims int) testDB {
	return vecDB(b, fmt.Sprintf("%d-%d", n, dims), dims, func(add func(index.Update)) {
		for i := range n {
			add(page(fmt.Sprintf("p%06d.md", i), fmt.Sprintf("chunk %d", i)))
		}
	})
}

// mixedDB builds a home of 100k chunks of 384 dimensions where sessions
// are the bulk, as for an agent that has run for a while: 30k notebook
// chunks (pages of 10), 10k daily (days of 10), 60k sessions (one of
// 2,000 turns, "sessions/big.jsonl", and 290 of 200, "sessions/s0000.jsonl"...).
func mixedDB(b *testing.B) testDB {
	return vecDB(b, "mixed-100000-384", 384, func(add func(index.Update)) {
		file := func(path, source string, chunks int) {
			u := page(path)
			u.File.Source = source
			for i := range chunks {
				text := fmt.Sprintf("%s %d", path, i)
				u.Chunks = append(u.Chunks, index.Chunk{StartLine: i + 1, EndLine: i + 1, Text: text, Hash: text})
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
func vecDB(b *testing.B, name string, dims int, updates func(add func(index.Update))) testDB {
	r := rand.New(rand.NewSource(1))
	return vecDBOf(b, name, dims, updates, func() []float32 { return randomUnit(r, dims) })
}

// vecDBOf is vecDB with the vectors next makes, one a chunk in id order.
func vecDBOf(b *testing.B, name string, dims int, updates func(add func(index.Update)), next func() []float32) testDB {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("memhost-knn-schema%s-%s.db", index.SchemaVersion, name))
	if _, err := os.Stat(path + ".complete"); err != nil {
		os.Remove(path)
		db, err := openAt(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		var batch index.Batch
		chunks := 0
		flush := func() {
			if err := db.Apply(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch, chunks = index.Batch{}, 0
		}
		updates(func(u index.Update) {
			batch.Upserts = append(batch.Upserts, u)
			if chunks += len(u.Chunks); chunks >= 1000 {
				flush()
			}
		})
		flush()
		if _, err := db.SetModel(ctx, Model{Provider: "rand", Model: "rand", Dimensions: dims}); err != nil {
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
				vecs[i] = ChunkVector{p.ID, next()}
			}
			if _, err := db.Put(ctx, "rand", vecs); err != nil {
				b.Fatal(err)
			}
		}
		db.Close()
		os.WriteFile(path+".complete", nil, 0o644)
	}
	db, err := openAt(ctx, path)
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
				hits, err := db.vdb.Search(ctx, q, 60, nil, "")
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
				hits, err := db.vdb.Search(ctx, q, 60, bm.sources, bm.path)
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

// topics makes unit vectors shaped like sentence embeddings: the sum of a
// direction all share, the directions of the vector's groups at five
// levels (of about 5,000, 1,000, 200, 40 and 8 vectors: subject, topic,
// thread...), and noise. Random Gaussian vectors have no near neighbours,
// the worst case of a quantised search and not what users have. The
// weights are fitted to 15,597 real MiniLM vectors (LoCoMo turns and
// sentences, Go doc comments) and 994 queries: the mean cosine of a query
// to its 1st, 10th, 60th, 200th, 1000th and median neighbour is 0.68,
// 0.54, 0.45, 0.37, 0.25, 0.05 there, 0.65, 0.54, 0.41, 0.32, 0.19, 0.05
// here. Binary quantisation finds these a little easier than the real
// ones: recall here is no proof of recall there (TestQuantizedRecall).
type topics struct {
	n      int // vectors the groups are sized for
	dims   int
	r      *randv2.Rand
	shared []float32
}

var topicLevels = []struct {
	size   int
	weight float64 // of the squared length
}{{5000, 0.08}, {1000, 0.12}, {200, 0.14}, {40, 0.10}, {8, 0.15}}

const topicShared, topicNoise = 0.03, 0.38

// newTopics makes the groups of n vectors; seed picks the vectors, not
// the groups, so that queries of another seed fall among the same topics.
func newTopics(n, dims int, seed uint64) *topics {
	return &topics{n: n, dims: dims, r: randv2.New(randv2.NewPCG(seed, 1)), shared: direction(dims, 0, 0)}
}

// direction is the unit vector of group g of level l.
func direction(dims, l, g int) []float32 {
	r := randv2.New(randv2.NewPCG(uint64(l)+1, uint64(g)))
	v := make([]float32, dims)
	var n float64
	for i := range v {
		x := r.NormFloat64()
		v[i], n = float32(x), n+x*x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func (t *topics) next() []float32 {
	leafSize := topicLevels[len(topicLevels)-1].size
	leaf := t.r.IntN(max(1, t.n/leafSize))
	v := make([]float64, t.dims)
	add := func(dir []float32, weight float64) {
		for i := range v {
			v[i] += math.Sqrt(weight) * float64(dir[i])
		}
	}
	add(t.shared, topicShared)
	for l, lv := range topicLevels {
		add(direction(t.dims, l+1, leaf*leafSize/lv.size), lv.weight)
	}
	noise := make([]float32, t.dims)
	for i := range noise {
		noise[i] = float32(t.r.NormFloat64() / math.Sqrt(float64(t.dims)))
	}
	add(noise, topicNoise)
	out := make([]float32, t.dims)
	var n float64
	for _, x := range v {
		n += x * x
	}
	for i, x := range v {
		out[i] = float32(x / math.Sqrt(n))
	}
	return out
}

// topicDB builds an index of n chunks of 384 dimensions shaped as mixedDB
// (30% notebook pages of 10, 10% daily pages of 10, 60% sessions of 200
// turns) with topic vectors.
func topicDB(b *testing.B, n int) testDB {
	t := newTopics(n, 384, 1)
	return vecDBOf(b, fmt.Sprintf("topics-%d-384", n), 384, func(add func(index.Update)) {
		file := func(path, source string, chunks int) {
			u := page(path)
			u.File.Source = source
			for i := range chunks {
				text := fmt.Sprintf("%s %d", path, i)
				u.Chunks = append(u.Chunks, index.Chunk{StartLine: i + 1, EndLine: i + 1, Text: text, Hash: text})
			}
			add(u)
		}
		for i := range n * 3 / 100 {
			file(fmt.Sprintf("notes/p%06d.md", i), "notebook", 10)
		}
		for i := range n / 100 {
			file(fmt.Sprintf("daily/d%06d.md", i), "daily", 10)
		}
		for i := range n * 6 / 10 / 200 {
			file(fmt.Sprintf("sessions/s%06d.jsonl", i), "sessions", 200)
		}
	}, t.next)
}

// BenchmarkKNNQuantized: the vector half of a hybrid recall (k = 60),
// exact (every vector compared) and quantised (bits, then the best
// re-scored), in one run on one index: 110k and 1M chunks of 384
// dimensions with topic vectors, and 100k random ones (knnDB), the worst
// case of binary quantisation; unfiltered and limited to one source
// (sessions, 60% of the topic chunks). recall@10 is the share of the exact
// top 10 the quantised search finds; snapshot-MB the bits it holds in
// memory, load-ms the time to read them after a write, db-MB the database
// file.
func BenchmarkKNNQuantized(b *testing.B) {
	for _, set := range []struct {
		name   string
		db     func(*testing.B) testDB
		filter bool
		query  func() func() []float32
	}{
		{"topics/chunks=110000", func(b *testing.B) testDB { return topicDB(b, 110000) }, true,
			func() func() []float32 { return newTopics(110000, 384, 2).next }},
		{"topics/chunks=1000000", func(b *testing.B) testDB { return topicDB(b, 1000000) }, true,
			func() func() []float32 { return newTopics(1000000, 384, 2).next }},
		{"random/chunks=100000", func(b *testing.B) testDB { return knnDB(b, 100000, 384) }, false,
			func() func() []float32 {
				r := rand.New(rand.NewSource(2))
				return func() []float32 { return randomUnit(r, 384) }
			}},
	} {
		b.Run(set.name, func(b *testing.B) {
			db := set.db(b)
			next := set.query()
			queries := make([][]float32, 50)
			for i := range queries {
				queries[i] = next()
			}
			filters := []struct {
				name    string
				sources []string
			}{{"all", nil}, {"sessions", []string{"sessions"}}}
			if !set.filter {
				filters = filters[:1]
			}
			for _, filter := range filters {
				want := make([][]index.Hit, len(queries))
				b.Run(filter.name+"/exact", func(b *testing.B) {
					exact(db)
					timeFixedQueries(b, queries, func(ctx context.Context, i int) {
						hits, err := db.vdb.Search(ctx, queries[i], 60, filter.sources, "")
						if err != nil || len(hits) != 60 {
							b.Fatalf("%d hits, %v", len(hits), err)
						}
						want[i] = hits
					})
				})
				b.Run(filter.name+"/quantized", func(b *testing.B) {
					quantized(db)
					var recall float64
					timeFixedQueries(b, queries, func(ctx context.Context, i int) {
						hits, err := db.vdb.Search(ctx, queries[i], 60, filter.sources, "")
						if err != nil || len(hits) != 60 {
							b.Fatalf("%d hits, %v", len(hits), err)
						}
						if want[i] != nil {
							recall += recallAt10(hits, want[i])
						}
					})
					b.ReportMetric(recall/float64(b.N*len(queries)), "recall@10")
					var bytes int
					for _, p := range db.cache.snap.parts {
						bytes += 8*len(p.ids) + 8*len(p.bits)
					}
					b.ReportMetric(float64(bytes)/1e6, "snapshot-MB")
					start := time.Now()
					if _, err := loadBits(context.Background(), db.SQL(), ""); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "load-ms")
					st, err := db.Stats(context.Background())
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(st.SizeBytes)/1e6, "db-MB")
				})
			}
		})
	}
}

// BenchmarkKNNCrossover: exact and quantised search of one source of
// topic vectors, k = 10 and 60, in indexes of 20k and 40k chunks (sources
// of 2k to 24k): where coarseRatio comes from.
func BenchmarkKNNCrossover(b *testing.B) {
	for _, n := range []int{20000, 40000} {
		db := topicDB(b, n) // notebook 30%, daily 10%, sessions 60%
		t := newTopics(n, 384, 2)
		queries := make([][]float32, 50)
		for i := range queries {
			queries[i] = t.next()
		}
		for _, source := range []string{"daily", "notebook", "sessions"} {
			for _, k := range []int{10, 60} {
				for _, mode := range []struct {
					name string
					set  func(testDB)
				}{{"exact", exact}, {"quantized", quantized}} {
					b.Run(fmt.Sprintf("vectors=%d/k=%d/%s", n/100*map[string]int{"daily": 10, "notebook": 30, "sessions": 60}[source], k, mode.name), func(b *testing.B) {
						mode.set(db)
						timeFixedQueries(b, queries, func(ctx context.Context, i int) {
							hits, err := db.vdb.Search(ctx, queries[i], k, []string{source}, "")
							if err != nil || len(hits) != k {
								b.Fatalf("%d hits, %v", len(hits), err)
							}
						})
					})
				}
			}
		}
	}
}

// timeFixedQueries runs query with each of queries per iteration and
// reports the p50 and p95 times.
func timeFixedQueries(b *testing.B, queries [][]float32, query func(ctx context.Context, i int)) {
	ctx := context.Background()
	var ds []time.Duration
	b.ResetTimer()
	for range b.N {
		for i := range queries {
			start := time.Now()
			query(ctx, i)
			ds = append(ds, time.Since(start))
		}
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds())/1000, "p95-ms")
}
