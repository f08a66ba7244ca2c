package modelstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// version is the file a server holds at one time, with its validators.
type version struct {
	content []byte
	etag    string    // "" for none
	modtime time.Time // the zero time for no Last-Modified
}

// pattern is n bytes that differ from pattern(n, other seed) everywhere.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)*seed + seed
	}
	return b
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// request is what a download asked of the server.
type request struct{ rng, ifRange string }

// flaky serves a file whose first answer breaks off after cut bytes
// (with cut >= 0); answers[n], when set, answers request n; every other
// answer is http.ServeContent's, with Range and If-Range as net/http
// implements them, from the version held then.
type flaky struct {
	*httptest.Server
	mu      sync.Mutex
	v       version
	cut     int
	answers map[int]func(w http.ResponseWriter, r *http.Request, v version)
	reqs    []request
	sent    []int // body bytes of each answer
}

func serveFlaky(v version, cut int) *flaky {
	s := &flaky{v: v, cut: cut}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, request{r.Header.Get("Range"), r.Header.Get("If-Range")})
		s.sent = append(s.sent, 0)
		v, answer := s.v, s.answers[n]
		s.mu.Unlock()
		cw := &countWriter{ResponseWriter: w, s: s, n: n, left: -1}
		if v.etag != "" {
			w.Header().Set("ETag", v.etag)
		}
		if answer != nil {
			answer(cw, r, v)
			return
		}
		if n == 0 {
			cw.left = s.cut
		}
		http.ServeContent(cw, r, "m.gguf", v.modtime, bytes.NewReader(v.content))
	}))
	return s
}

func (s *flaky) set(v version) {
	s.mu.Lock()
	s.v = v
	s.mu.Unlock()
}

func (s *flaky) log() ([]request, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.reqs...), append([]int(nil), s.sent...)
}

// countWriter counts the body bytes of answer n and, with left >= 0,
// breaks the connection once left bytes are out.
type countWriter struct {
	http.ResponseWriter
	s    *flaky
	n    int
	left int
}

func (w *countWriter) Write(p []byte) (int, error) {
	if w.left >= 0 && len(p) > w.left {
		p = p[:w.left]
	}
	n, err := w.ResponseWriter.Write(p)
	w.s.mu.Lock()
	w.s.sent[w.n] += n
	w.s.mu.Unlock()
	if w.left >= 0 {
		if w.left -= n; w.left == 0 {
			w.ResponseWriter.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // the server goes away mid-download
		}
	}
	return n, err
}

// pullCut makes a first download break off, leaving a partial file.
func pullCut(t *testing.T, st *Store, ref Ref) {
	t.Helper()
	err := st.Pull(context.Background(), ref, nil)
	if err == nil || !strings.Contains(err.Error(), "run again to resume") {
		t.Fatalf("first pull: %v, want an interrupted download", err)
	}
	if fi, err := os.Stat(ref.Path + ".part"); err != nil || fi.Size() == 0 {
		t.Fatalf("no partial file after the cut: %v", err)
	}
}

// checkPulled: the model in place is want, and nothing of the partial
// download is left beside it.
func checkPulled(t *testing.T, st *Store, ref Ref, want []byte) {
	t.Helper()
	got, err := os.ReadFile(ref.Path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the model holds %d bytes (sha256 %s), want %d (sha256 %s): %v", len(got), digest(got), len(want), digest(want), err)
	}
	entries, _ := os.ReadDir(st.Dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the models folder holds %v, want the model alone", names)
	}
}

// TestPullResumesOnlyTheSameFile: a download resumed after the file
// changed on the server gets the new file whole, never the new bytes
// spliced onto the old partial ones: the resume is pinned by If-Range to
// the first answer's validator (a strong ETag, else Last-Modified), and
// a partial download with neither starts over. The file unchanged, the
// download resumes where it broke off.
func TestPullResumesOnlyTheSameFile(t *testing.T) {
	t.Parallel()
	const size, cut = 300 << 10, 100 << 10
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	t2 := t1.Add(time.Hour)
	old := pattern(size, 3)
	tests := []struct {
		name        string
		first, next version
		ifRange     string // the resume's If-Range; "" for no resume
	}{
		{"strong ETag, same size", version{old, `"v1"`, t1}, version{pattern(size, 5), `"v2"`, t1}, `"v1"`},
		{"strong ETag, longer", version{old, `"v1"`, time.Time{}}, version{pattern(size+1000, 5), `"v2"`, time.Time{}}, `"v1"`},
		{"strong ETag, shorter", version{old, `"v1"`, time.Time{}}, version{pattern(cut+10, 5), `"v2"`, time.Time{}}, `"v1"`},
		{"weak ETag: Last-Modified", version{old, `W/"v1"`, t1}, version{pattern(size, 5), `W/"v2"`, t2}, t1.Format(http.TimeFormat)},
		{"Last-Modified only", version{old, "", t1}, version{pattern(size, 5), "", t2}, t1.Format(http.TimeFormat)},
		{"no validator", version{old, "", time.Time{}}, version{pattern(size, 5), "", time.Time{}}, ""},
		{"unchanged", version{old, `"v1"`, t1}, version{old, `"v1"`, t1}, `"v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serveFlaky(tt.first, cut)
			defer srv.Close()
			st := &Store{Dir: t.TempDir(), Client: srv.Client()}
			ref, err := st.Resolve(srv.URL+"/m.gguf", "", digest(tt.next.content))
			if err != nil {
				t.Fatal(err)
			}
			pullCut(t, st, ref)
			srv.set(tt.next)
			if err := st.Pull(context.Background(), ref, nil); err != nil {
				t.Fatalf("second pull: %v", err)
			}
			checkPulled(t, st, ref, tt.next.content)
			reqs, sent := srv.log()
			if len(reqs) != 2 {
				t.Fatalf("requests %+v, want 2", reqs)
			}
			want := request{}
			if tt.ifRange != "" {
				want = request{fmt.Sprintf("bytes=%d-", cut), tt.ifRange}
			}
			if reqs[1] != want {
				t.Errorf("second request: Range %q, If-Range %q; want %q, %q", reqs[1].rng, reqs[1].ifRange, want.rng, want.ifRange)
			}
			if tt.name == "unchanged" && sent[1] != size-cut {
				t.Errorf("the resume was sent %d bytes, want the %d missing", sent[1], size-cut)
			}
		})
	}
}

// TestPullResumeAnswers: answers to a resume that do not continue the
// partial file — the whole file (a server that ignores Range), a range
// starting elsewhere, a range of a file of another size, a 206 that does
// not say its range — make the download start over from the first byte,
// once, never append to what it has.
func TestPullResumeAnswers(t *testing.T) {
	t.Parallel()
	const size, cut = 300 << 10, 100 << 10
	file := version{pattern(size, 7), `"v1"`, time.Time{}}
	partial := func(w http.ResponseWriter, from, to, total int, body []byte) {
		if total >= 0 {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, total))
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(body)))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(body)
	}
	tests := []struct {
		name     string
		answer   func(w http.ResponseWriter, r *http.Request, v version)
		requests int
	}{
		{"200: Range ignored", func(w http.ResponseWriter, r *http.Request, v version) {
			w.Header().Set("Content-Length", fmt.Sprint(len(v.content)))
			w.Write(v.content)
		}, 2},
		{"206 from the first byte", func(w http.ResponseWriter, r *http.Request, v version) {
			partial(w, 0, size-1, size, v.content)
		}, 3},
		{"206 overlapping the partial file", func(w http.ResponseWriter, r *http.Request, v version) {
			partial(w, cut-10, size-1, size, v.content[cut-10:])
		}, 3},
		{"206 past the partial file", func(w http.ResponseWriter, r *http.Request, v version) {
			partial(w, cut+10, size-1, size, v.content[cut+10:])
		}, 3},
		{"206 of a longer file", func(w http.ResponseWriter, r *http.Request, v version) {
			partial(w, cut, size+9, size+10, append(v.content[cut:], pattern(10, 9)...))
		}, 3},
		{"206 without Content-Range", func(w http.ResponseWriter, r *http.Request, v version) {
			partial(w, 0, 0, -1, v.content[cut:])
		}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serveFlaky(file, cut)
			srv.answers = map[int]func(http.ResponseWriter, *http.Request, version){1: tt.answer}
			defer srv.Close()
			st := &Store{Dir: t.TempDir(), Client: srv.Client()}
			ref, err := st.Resolve(srv.URL+"/m.gguf", "", digest(file.content))
			if err != nil {
				t.Fatal(err)
			}
			pullCut(t, st, ref)
			if err := st.Pull(context.Background(), ref, nil); err != nil {
				t.Fatalf("second pull: %v", err)
			}
			checkPulled(t, st, ref, file.content)
			reqs, _ := srv.log()
			if len(reqs) != tt.requests {
				t.Fatalf("requests %+v, want %d", reqs, tt.requests)
			}
			if tt.requests == 3 && reqs[2] != (request{}) {
				t.Errorf("the download started over with Range %q, If-Range %q; want neither", reqs[2].rng, reqs[2].ifRange)
			}
		})
	}
}

// TestPullWholePartial: a partial file that is whole already (the
// download ended before its rename) is checked and put in place when the
// server says so (416 for the bytes past its end, its validator still
// the file's), and replaced by the file when it changed; a 416 that
// names another size drops it and fetches the file whole.
func TestPullWholePartial(t *testing.T) {
	t.Parallel()
	const size = 50 << 10
	file := version{pattern(size, 11), `"v1"`, time.Time{}}
	tests := []struct {
		name     string
		now      version
		answer   func(w http.ResponseWriter, r *http.Request, v version)
		requests int
	}{
		{"unchanged", file, nil, 1},
		{"changed", version{pattern(size+5, 13), `"v2"`, time.Time{}}, nil, 1},
		{"416 of another size", file, func(w http.ResponseWriter, r *http.Request, v version) {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size-1))
			w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serveFlaky(tt.now, -1)
			srv.answers = map[int]func(http.ResponseWriter, *http.Request, version){0: tt.answer}
			defer srv.Close()
			st := &Store{Dir: t.TempDir(), Client: srv.Client()}
			ref, err := st.Resolve(srv.URL+"/m.gguf", "", digest(tt.now.content))
			if err != nil {
				t.Fatal(err)
			}
			part := ref.Path + ".part"
			if err := os.WriteFile(part, file.content, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := saveResume(part, resumeState{ETag: file.etag, Size: size}); err != nil {
				t.Fatal(err)
			}
			if err := st.Pull(context.Background(), ref, nil); err != nil {
				t.Fatalf("pull: %v", err)
			}
			checkPulled(t, st, ref, tt.now.content)
			reqs, sent := srv.log()
			if len(reqs) != tt.requests || reqs[0] != (request{fmt.Sprintf("bytes=%d-", size), file.etag}) {
				t.Fatalf("requests %+v, want %d, the first for the bytes past the partial file", reqs, tt.requests)
			}
			if tt.name == "unchanged" && sent[0] >= size {
				t.Errorf("%d bytes sent for a whole partial file, want a 416's message", sent[0])
			}
		})
	}
}

// TestRemoveTakesResumeState: removing a model removes its partial
// download and what was kept to resume it.
func TestRemoveTakesResumeState(t *testing.T) {
	t.Parallel()
	const size, cut = 64 << 10, 16 << 10
	srv := serveFlaky(version{pattern(size, 3), `"v1"`, time.Time{}}, cut)
	defer srv.Close()
	st := &Store{Dir: t.TempDir(), Client: srv.Client()}
	ref, _ := st.Resolve(srv.URL+"/m.gguf", "", "")
	pullCut(t, st, ref)
	if err := st.Remove("m"); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(st.Dir)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".failed.json") {
			t.Errorf("left after Remove: %s", e.Name())
		}
	}
	if _, err := os.Stat(ref.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("model: %v", err)
	}
}
