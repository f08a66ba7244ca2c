package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/memhost/memhost/modelstore"
	"github.com/memhost/memhost/plugins/embeddings-local/gguf"
	"github.com/memhost/memhost/sdk"
	"github.com/memhost/memhost/sdk/sdktest"
)

// testModel is the shared MiniLM model; tests that need it skip without it.
func testModel(t testing.TB) string {
	t.Helper()
	p := os.Getenv("MEMHOST_TEST_MODEL")
	if p == "" {
		p = filepath.Join("..", "..", "..", "shared", "models", modelstore.DefaultName)
	}
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no test model at %s: set MEMHOST_TEST_MODEL to a GGUF embedding model (e.g. %s) to run this test", p, modelstore.DefaultName)
	}
	abs, _ := filepath.Abs(p)
	return abs
}

func ready(t testing.TB, p *Provider) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, _ := p.Status(context.Background())
		switch st.State {
		case sdk.StateReady:
			return
		case sdk.StateError:
			t.Fatalf("provider error: %s", st.Message)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func loaded(t testing.TB, opts map[string]string) *Provider {
	t.Helper()
	return loadedLog(t, hclog.NewNullLogger(), opts)
}

// loadedLog is loaded with a logger; the model and its worker processes
// are freed when the test ends.
func loadedLog(t testing.TB, log hclog.Logger, opts map[string]string) *Provider {
	t.Helper()
	p := New(t.TempDir(), log)
	o := map[string]string{"model": testModel(t)}
	for k, v := range opts {
		o[k] = v
	}
	if err := p.Configure(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	ready(t, p)
	t.Cleanup(p.unload)
	return p
}

func cos(a, b []float32) float64 {
	var d, x, y float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		x += float64(a[i]) * float64(a[i])
		y += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(x*y)
}

func TestGGUFMetadata(t *testing.T) {
	m, err := gguf.Read(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.Architecture != "bert" || m.Embedding != 384 || m.Context != 512 || !m.IsEmbedding() {
		t.Errorf("metadata = %+v", m)
	}
}

func TestEmbeddings(t *testing.T) {
	if raceEngine {
		t.Skip("a -race build has no llama.cpp (engine.go): the plain `go test` run checks the model's vectors")
	}
	p := loaded(t, nil)
	ctx := context.Background()
	info, _ := p.Info(ctx)
	if info.Dimensions != 384 || info.MaxInputTokens != 512 || !strings.HasPrefix(info.ModelID, "all-MiniLM-L6-v2-Q4_K_M@2ec4cee28a27") {
		t.Errorf("Info = %+v", info)
	}
	texts := []string{"What is Sarah's phone number?", "Sarah Chen - Phone: 555-1234", "The weather in Paris is sunny today.", "Bananas are yellow."}
	v, err := p.Embed(ctx, texts, sdk.KindDocument)
	if err != nil {
		t.Fatal(err)
	}
	near, far := cos(v[0], v[1]), math.Max(cos(v[0], v[2]), cos(v[0], v[3]))
	if near < 0.5 || far > 0.2 {
		t.Errorf("cos(question, Sarah's number) = %.3f, cos(question, unrelated) = %.3f", near, far)
	}
	for i, text := range texts {
		one, err := p.Embed(ctx, []string{text}, sdk.KindDocument)
		if err != nil {
			t.Fatal(err)
		}
		var d float64
		for j := range one[0] {
			d = math.Max(d, math.Abs(float64(one[0][j]-v[i][j])))
		}
		if d > 1e-4 {
			t.Errorf("text %d: batch and one-by-one differ by %g", i, d)
		}
	}
	// Texts longer than the context are truncated, not refused.
	long := strings.Repeat("memory notebook search sync ", 600)
	if got, err := p.Embed(ctx, []string{long, "short"}, sdk.KindDocument); err != nil || len(got) != 2 {
		t.Errorf("over-long text: %v", err)
	}
}

func TestConformance(t *testing.T) {
	sdktest.Run(t, loaded(t, nil), sdktest.Options{})
}

func TestPrefixesChangeModelID(t *testing.T) {
	a, _ := loaded(t, nil).Info(context.Background())
	b, _ := loaded(t, map[string]string{"queryPrefix": "query: "}).Info(context.Background())
	if a.ModelID == b.ModelID {
		t.Errorf("a prefix that changes vectors kept the model id %s", a.ModelID)
	}
}

// TestDownloadThenReady: with the model missing, the provider downloads it
// (Status: downloading, then loading, then ready), as from Hugging Face.
func TestDownloadThenReady(t *testing.T) {
	model, err := os.ReadFile(testModel(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "m.gguf", time.Unix(0, 0), bytes.NewReader(model))
	}))
	defer srv.Close()
	dir := t.TempDir()
	p := New(dir, hclog.NewNullLogger())
	if err := p.Configure(context.Background(), map[string]string{"modelURL": srv.URL + "/" + modelstore.DefaultName}); err != nil {
		t.Fatal(err)
	}
	sdktest.Run(t, p, sdktest.Options{}) // includes waiting for ready through sane states
	if _, err := os.Stat(filepath.Join(dir, modelstore.DefaultName)); err != nil {
		t.Errorf("model not in the models folder: %v", err)
	}
}

// TestNoNetwork: offline, the provider says so in a short line, and a
// second provider on the same models folder (another process) does not try
// again before the backoff has passed, nor claims to be downloading.
func TestNoNetwork(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	dir := t.TempDir()
	opts := map[string]string{"modelURL": url + "/" + modelstore.DefaultName}
	want := "model not downloaded (offline); memhost models pull FILE|URL installs " + modelstore.DefaultName
	p := New(dir, hclog.NewNullLogger())
	if err := p.Configure(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, _ := p.Status(context.Background())
		if st.State == sdk.StateError {
			if st.Message != want {
				t.Errorf("message: %q, want %q", st.Message, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no error without network: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := p.Embed(context.Background(), []string{"x"}, sdk.KindDocument); err == nil {
		t.Error("Embed without a model succeeded")
	}
	f, ok := (&modelstore.Store{Dir: dir}).LastFailure(modelstore.DefaultName)
	if !ok || !f.Offline || f.Count != 1 || !strings.Contains(f.Err, "connection refused") {
		t.Errorf("failure record: %+v, %v", f, ok)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("models folder holds more than the failure record: %v", ents)
	}

	q := New(dir, hclog.NewNullLogger())
	if err := q.Configure(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		st, _ := q.Status(context.Background())
		if st.State == sdk.StateDownloading {
			t.Fatalf("the second provider claims a download within the backoff: %+v", st)
		}
		if st.State == sdk.StateError {
			if st.Message != want {
				t.Errorf("second provider's message: %q", st.Message)
			}
			break
		}
		if i > 500 {
			t.Fatalf("second provider: %+v", st)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if f2, _ := (&modelstore.Store{Dir: dir}).LastFailure(modelstore.DefaultName); f2.Count != 1 {
		t.Errorf("the second provider tried again within the backoff: %+v", f2)
	}

	// The user installs the file she has: the provider loads it at once,
	// not after the backoff.
	if _, err := (&modelstore.Store{Dir: dir}).Install(context.Background(), testModel(t), "", nil); err != nil {
		t.Fatal(err)
	}
	ready(t, q)
}

func TestBadModelFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.gguf")
	os.WriteFile(garbage, []byte("this is not a model at all, just text"), 0o644)
	truncated := filepath.Join(dir, "truncated.gguf")
	if b, err := os.ReadFile(testModel(t)); err == nil {
		os.WriteFile(truncated, b[:2000], 0o644)
	}
	decoder := filepath.Join(dir, "decoder.gguf")
	os.WriteFile(decoder, minimalGGUF("llama", 8), 0o644)
	for file, want := range map[string]string{
		garbage:   "no GGUF magic number",
		truncated: "file ends too early",
		decoder:   "is not an embedding model",
	} {
		p := New(dir, hclog.NewNullLogger())
		if err := p.Configure(context.Background(), map[string]string{"model": file}); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, _ := p.Status(context.Background())
			if st.State == sdk.StateError {
				if !strings.Contains(st.Message, want) || !strings.Contains(st.Message, file) {
					t.Errorf("%s: %q, want %q and the file name", filepath.Base(file), st.Message, want)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no error: %+v", file, st)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestOptions(t *testing.T) {
	p := New(t.TempDir(), hclog.NewNullLogger())
	for _, bad := range []map[string]string{{"colour": "x"}, {"threads": "0"}, {"batchSize": "9999"}, {"normalize": "maybe"}, {"sha256": "abc"}, {"model": "not-in-store"}} {
		if err := p.Configure(context.Background(), bad); err == nil {
			t.Errorf("Configure(%v) succeeded", bad)
		}
	}
}

// minimalGGUF writes a GGUF v3 header with an architecture and an
// embedding length, and no tensors.
func minimalGGUF(arch string, dims uint32) []byte {
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("GGUF")
	binary.Write(&b, le, uint32(3))
	binary.Write(&b, le, uint64(0))
	binary.Write(&b, le, uint64(2))
	str := func(s string) { binary.Write(&b, le, uint64(len(s))); b.WriteString(s) }
	str("general.architecture")
	binary.Write(&b, le, uint32(8))
	str(arch)
	str(arch + ".embedding_length")
	binary.Write(&b, le, uint32(4))
	binary.Write(&b, le, dims)
	return b.Bytes()
}

// TestInfoWhileLoading: a model file that is there gives Info its
// dimensions as soon as Configure returns, before the model has loaded.
func TestInfoWhileLoading(t *testing.T) {
	p := newProvider(t.TempDir(), hclog.NewNullLogger(), "")
	if err := p.Configure(context.Background(), map[string]string{"model": testModel(t)}); err != nil {
		t.Fatal(err)
	}
	if info, _ := p.Info(context.Background()); info.Dimensions != 384 {
		t.Errorf("Info right after Configure = %+v, want 384 dimensions", info)
	}
	// A model to download (from nowhere): not known until it is there.
	if err := p.Configure(context.Background(), map[string]string{"model": "http://127.0.0.1:1/absent.gguf"}); err != nil {
		t.Fatal(err)
	}
	if info, _ := p.Info(context.Background()); info.Dimensions != 0 || info.ModelID != "absent" {
		t.Errorf("Info after configuring a missing model = %+v, want no dimensions", info)
	}
	// The download fails in the background and records the failure in
	// the models folder (t.TempDir): wait for it, or the record lands
	// while the folder is being removed (seen under load: "directory not
	// empty").
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _ := p.Status(context.Background())
		if st.State == sdk.StateError {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the download of a model from a closed port never failed: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestUnusableCPU: on a CPU that lacks what the binary was compiled for,
// the provider loads nothing and says why in its status, configured or not.
func TestUnusableCPU(t *testing.T) {
	why := "this memhost-embeddings-local was compiled for a CPU with avx512f, which this CPU lacks"
	p := newProvider(t.TempDir(), hclog.NewNullLogger(), why)
	ctx := context.Background()
	if err := p.Configure(ctx, map[string]string{"threads": "2"}); err != nil {
		t.Fatalf("configure: %v", err)
	}
	if err := p.Configure(ctx, map[string]string{"nonsense": "1"}); err == nil {
		t.Errorf("a bad option was accepted")
	}
	st, err := p.Status(ctx)
	if err != nil || st.State != sdk.StateError || st.Message != why {
		t.Fatalf("status = %+v, %v; want error %q", st, err, why)
	}
	if _, err := p.Embed(ctx, []string{"hello"}, sdk.KindQuery); err == nil {
		t.Errorf("embed answered on an unusable CPU")
	}
}
