package modelstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// sharedModel is the test model of ../shared/models; tests that serve it
// skip when it is absent (CI always has it).
func sharedModel(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "models", DefaultName))
	if err != nil {
		t.Skipf("the test model is not in ../shared/models (%v): place %s there to run this test", err, DefaultName)
	}
	return b
}

// server serves content with Range support; cutAt > 0 makes the first
// request break its connection after that many bytes.
type server struct {
	*httptest.Server
	mu      sync.Mutex
	ranges  []string
	cutAt   int
	content []byte
}

func serve(content []byte, cutAt int) *server {
	s := &server{content: content, cutAt: cutAt}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A validator, which a download needs to be resumed (resume.go).
		w.Header().Set("ETag", `"`+digest(content)+`"`)
		s.mu.Lock()
		s.ranges = append(s.ranges, r.Header.Get("Range"))
		cut := s.cutAt
		s.cutAt = 0
		s.mu.Unlock()
		if cut > 0 {
			w.Header().Set("Content-Length", strconv.Itoa(len(content)))
			w.WriteHeader(http.StatusOK)
			w.Write(content[:cut])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the server goes away mid-download
		}
		http.ServeContent(w, r, DefaultName, time.Unix(0, 0), bytes.NewReader(content))
	}))
	return s
}

func TestPullFull(t *testing.T) {
	model := sharedModel(t)
	srv := serve(model, 0)
	defer srv.Close()
	st := &Store{Dir: t.TempDir()}
	ref, err := st.Resolve("", srv.URL+"/m.gguf", "")
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	if err := st.Pull(context.Background(), ref, func(done, total int64) { last = done }); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(st.Dir, DefaultName))
	if err != nil || !bytes.Equal(got, model) || last != int64(len(model)) {
		t.Fatalf("downloaded %d bytes (progress %d), %v", len(got), last, err)
	}
	if _, err := os.Stat(ref.Path + ".part"); !errors.Is(err, os.ErrNotExist) {
		t.Error(".part file left behind")
	}
}

func TestPullResumesAfterCut(t *testing.T) {
	model := sharedModel(t)
	srv := serve(model, len(model)/3)
	defer srv.Close()
	st := &Store{Dir: t.TempDir()}
	ref, _ := st.Resolve("", srv.URL+"/m.gguf", "")
	err := st.Pull(context.Background(), ref, nil)
	if err == nil || !strings.Contains(err.Error(), "run again to resume") {
		t.Fatalf("first pull: %v, want an interrupted download", err)
	}
	if fi, err := os.Stat(ref.Path + ".part"); err != nil || fi.Size() == 0 {
		t.Fatalf("no partial file after the cut: %v", err)
	}
	if ref.Present() {
		t.Fatal("an incomplete model is in place")
	}
	if err := st.Pull(context.Background(), ref, nil); err != nil {
		t.Fatalf("resume: %v", err)
	}
	got, _ := os.ReadFile(ref.Path)
	if !bytes.Equal(got, model) {
		t.Fatal("resumed file differs")
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if len(srv.ranges) != 2 || !strings.HasPrefix(srv.ranges[1], "bytes=") || srv.ranges[1] == "bytes=0-" {
		t.Errorf("requests' Range headers: %q, want a resume", srv.ranges)
	}
}

func TestPullBadChecksum(t *testing.T) {
	model := append([]byte(nil), sharedModel(t)...)
	model[len(model)/2] ^= 0xff // one corrupted byte
	srv := serve(model, 0)
	defer srv.Close()
	st := &Store{Dir: t.TempDir()}
	ref, _ := st.Resolve("", srv.URL+"/m.gguf", "")
	err := st.Pull(context.Background(), ref, nil)
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), DefaultSHA256) {
		t.Fatalf("corrupted download: %v", err)
	}
	entries, _ := os.ReadDir(st.Dir)
	if len(entries) != 1 || entries[0].Name() != "."+DefaultName+".failed.json" {
		t.Errorf("files left after a bad checksum (want only its failure record): %v", entries)
	}
}

func TestPullServerDown(t *testing.T) {
	srv := serve([]byte("x"), 0)
	srv.Close()
	st := &Store{Dir: t.TempDir()}
	ref, _ := st.Resolve("http://"+srv.Listener.Addr().String()+"/x.gguf", "", "")
	if err := st.Pull(context.Background(), ref, nil); err == nil || !strings.Contains(err.Error(), "downloading") {
		t.Errorf("server down: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := st.Pull(ctx, ref, nil); err == nil {
		t.Error("cancelled pull succeeded")
	}
}

func TestResolveListRemove(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	os.WriteFile(filepath.Join(st.Dir, "nomic.gguf"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(st.Dir, "half.gguf.part"), []byte("xy"), 0o644)
	os.WriteFile(filepath.Join(st.Dir, "notes.txt"), []byte("x"), 0o644)
	tests := []struct {
		in       string
		wantName string
		wantURL  bool
		wantErr  error
	}{
		{"", DefaultName, true, nil},
		{"nomic", "nomic.gguf", false, nil},
		{"nomic.gguf", "nomic.gguf", false, nil},
		{"https://example.org/models/bge-small.gguf", "bge-small.gguf", true, nil},
		{filepath.Join(st.Dir, "nomic.gguf"), "nomic.gguf", false, nil},
		{"missing", "", false, ErrNotFound},
		{"./nowhere/x.gguf", "", false, ErrNotFound},
	}
	for _, tt := range tests {
		ref, err := st.Resolve(tt.in, "", "")
		if !errors.Is(err, tt.wantErr) || ref.Name != tt.wantName || (ref.URL != "") != tt.wantURL {
			t.Errorf("Resolve(%q) = %+v, %v", tt.in, ref, err)
		}
	}
	if _, err := st.Resolve("https://example.org/readme", "", ""); err == nil {
		t.Error("a URL without a .gguf name was accepted")
	}
	list, err := st.List()
	if err != nil || len(list) != 2 || list[0].Name != "half.gguf" || !list[0].Partial || list[1].Name != "nomic.gguf" {
		t.Errorf("List = %+v, %v", list, err)
	}
	if err := st.Remove("nomic"); err != nil {
		t.Error(err)
	}
	if err := st.Remove("nomic"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Remove: %v", err)
	}
	if err := st.Remove("../etc"); err == nil {
		t.Error("Remove with a path succeeded")
	}
}

type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func TestDiskFull(t *testing.T) {
	err := copyProgress(context.Background(), fullDisk{}, strings.NewReader("some model bytes"), 0, 16, nil)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("writing to a full disk: %v", err)
	}
}

// TestPullOneAtATime: a second download of the same model, while the first
// runs, is refused with ErrBusy instead of writing into the same file.
func TestPullOneAtATime(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		w.Write([]byte("12345"))
		w.(http.Flusher).Flush()
		<-release
		w.Write([]byte("67890"))
	}))
	defer srv.Close()
	st := &Store{Dir: t.TempDir()}
	ref, _ := st.Resolve(srv.URL+"/m.gguf", "", "")
	first := make(chan error, 1)
	go func() { first <- st.Pull(context.Background(), ref, nil) }()
	deadline := time.Now().Add(5 * time.Second)
	var err error
	for {
		if fi, serr := os.Stat(ref.Path + ".part"); serr == nil && fi.Size() == 5 {
			err = st.Pull(context.Background(), ref, nil)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("first download never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(release)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("second Pull during the first: %v, want ErrBusy", err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ref.Path); string(b) != "1234567890" {
		t.Errorf("model = %q", b)
	}
}

// TestInstallLocalFile: a model file the user has is copied into the
// store, checked, listed; again, nothing changes; a wrong digest or a
// different file of the same name installs nothing. (Before, pulling a
// path answered "already present" and installed nothing.)
func TestInstallLocalFile(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(t.TempDir(), "tiny.gguf")
	body := []byte("GGUF pretend model bytes")
	os.WriteFile(src, body, 0o644)
	s := &Store{Dir: filepath.Join(t.TempDir(), "models")}
	for _, arg := range []string{src, "file://" + src} {
		p, ok := LocalSource(arg)
		if !ok || p != src {
			t.Fatalf("LocalSource(%q) = %q, %v", arg, p, ok)
		}
		ref, err := s.Install(ctx, p, "", nil)
		if err != nil || ref.Path != filepath.Join(s.Dir, "tiny.gguf") {
			t.Fatalf("Install = %+v, %v", ref, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(s.Dir, "tiny.gguf")); string(got) != string(body) {
		t.Fatalf("installed %q", got)
	}
	if models, err := s.List(); err != nil || len(models) != 1 {
		t.Fatalf("List = %+v, %v", models, err)
	}
	if _, err := s.Install(ctx, src, strings.Repeat("0", 64), nil); !errors.Is(err, ErrChecksum) {
		t.Errorf("wrong digest: %v", err)
	}
	other := filepath.Join(t.TempDir(), "tiny.gguf")
	os.WriteFile(other, []byte("another model"), 0o644)
	if _, err := s.Install(ctx, other, "", nil); err == nil || !strings.Contains(err.Error(), "memhost models rm tiny.gguf") {
		t.Errorf("a different file of the same name: %v", err)
	}
	if _, err := s.Install(ctx, filepath.Join(t.TempDir(), "missing.gguf"), "", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing file: %v", err)
	}
	if _, ok := LocalSource("all-MiniLM-L6-v2-Q4_K_M"); ok {
		t.Error("a bare name is not a local file")
	}
	if _, ok := LocalSource("https://example.com/x.gguf"); ok {
		t.Error("a URL is not a local file")
	}
	if entries, _ := os.ReadDir(s.Dir); len(entries) != 1 {
		t.Errorf("store holds %d files, want 1 (no .part left)", len(entries))
	}
}

// stallReader gives its chunks one per Read, then blocks until released.
type stallReader struct {
	chunks  [][]byte
	stalled chan struct{} // closed when the chunks are out
	release chan struct{}
}

func (r *stallReader) Read(p []byte) (int, error) {
	if len(r.chunks) > 0 {
		n := copy(p, r.chunks[0])
		r.chunks = r.chunks[1:]
		return n, nil
	}
	close(r.stalled)
	<-r.release
	return 0, io.EOF
}

// TestProgressBeforeStall: every byte read is reported before the next
// read blocks, so a download that stalls shows what had arrived, however
// soon after the last report it arrived.
func TestProgressBeforeStall(t *testing.T) {
	r := &stallReader{chunks: [][]byte{make([]byte, 10), make([]byte, 20), make([]byte, 30)}, stalled: make(chan struct{}), release: make(chan struct{})}
	var mu sync.Mutex
	var last int64
	done := make(chan error, 1)
	go func() {
		done <- copyProgress(context.Background(), io.Discard, r, 0, 100, func(d, _ int64) {
			mu.Lock()
			last = d
			mu.Unlock()
		})
	}()
	<-r.stalled
	mu.Lock()
	got := last
	mu.Unlock()
	close(r.release)
	<-done
	if got != 60 {
		t.Errorf("while the download stalls after 60 bytes, progress says %d", got)
	}
}

// TestDerivedRemovedWithModel: a provider's derived copy of a model is
// hidden from List, named by the digest, and removed with the model.
func TestDerivedRemovedWithModel(t *testing.T) {
	st := &Store{Dir: t.TempDir()}
	model := filepath.Join(st.Dir, "mini[1].gguf")
	os.WriteFile(model, []byte("x"), 0o644)
	derived := st.DerivedPath(model, "0123456789abcdef0123", "bf16v1")
	if filepath.Base(derived) != ".mini[1].0123456789abcdef.bf16v1.derived" {
		t.Errorf("DerivedPath = %s", derived)
	}
	other := st.DerivedPath(filepath.Join(st.Dir, "other.gguf"), "fedcba9876543210", "bf16v1")
	os.WriteFile(derived, []byte("y"), 0o644)
	os.WriteFile(other, []byte("y"), 0o644)
	if list, _ := st.List(); len(list) != 1 || list[0].Name != "mini[1].gguf" {
		t.Errorf("List = %+v: want the model only", list)
	}
	if err := st.Remove("mini[1]"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(derived); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("derived copy left after Remove: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another model's derived copy went too: %v", err)
	}
}
