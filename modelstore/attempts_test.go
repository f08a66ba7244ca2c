package modelstore

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestBackoffDoubles(t *testing.T) {
	at := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		count int
		wait  time.Duration
	}{{1, 30 * time.Second}, {2, time.Minute}, {3, 2 * time.Minute}, {7, 30 * time.Minute}, {50, 30 * time.Minute}} {
		if got := (Failure{At: at, Count: tt.count}).Next().Sub(at); got != tt.wait {
			t.Errorf("after %d failures: wait %v, want %v", tt.count, got, tt.wait)
		}
	}
}

// TestFailuresRecordedThenCleared: failed downloads are counted in the
// models folder, offline or not, and a download that succeeds clears them.
func TestFailuresRecordedThenCleared(t *testing.T) {
	body := []byte("GGUF model bytes")
	fail := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	s := &Store{Dir: t.TempDir()}
	ref := Ref{Name: "m.gguf", Path: filepath.Join(s.Dir, "m.gguf"), URL: srv.URL + "/m.gguf"}
	for range 2 {
		if err := s.Pull(context.Background(), ref, nil); err == nil {
			t.Fatal("pull from a failing server succeeded")
		}
	}
	f, ok := s.LastFailure("m.gguf")
	if !ok || f.Count != 2 || f.Offline || len(s.Failures()) != 1 {
		t.Errorf("after two refusals: %+v %v, failures %v", f, ok, s.Failures())
	}
	if _, err := os.Stat(ref.Path + ".part"); !os.IsNotExist(err) {
		t.Errorf("an empty .part file stayed: %v", err)
	}
	if models, _ := s.List(); len(models) != 0 {
		t.Errorf("List shows the failure record: %v", models)
	}
	fail = false
	if err := s.Pull(context.Background(), ref, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(ref.Path); !bytes.Equal(got, body) {
		t.Errorf("model: %q", got)
	}
	if _, ok := s.LastFailure("m.gguf"); ok || len(s.Failures()) != 0 {
		t.Error("a successful download left its failure record")
	}

	srv.Close() // now the host is unreachable
	ref2 := Ref{Name: "n.gguf", Path: filepath.Join(s.Dir, "n.gguf"), URL: srv.URL + "/n.gguf"}
	s.Pull(context.Background(), ref2, nil)
	if f, ok := s.LastFailure("n.gguf"); !ok || !f.Offline {
		t.Errorf("unreachable host not recorded as offline: %+v", f)
	}
}

// TestInstallClearsFailuresAndSparesADownload: installing a file the user
// has clears the record of failed downloads, and an install while a
// download holds the .part neither truncates it nor installs.
func TestInstallClearsFailuresAndSparesADownload(t *testing.T) {
	ctx := context.Background()
	s := &Store{Dir: t.TempDir()}
	s.recordFailure("tiny.gguf", errors.New("dial tcp: lookup huggingface.co: no such host"), time.Now())
	src := filepath.Join(t.TempDir(), "tiny.gguf")
	os.WriteFile(src, []byte("GGUF pretend model"), 0o644)

	part := filepath.Join(s.Dir, "tiny.gguf.part")
	os.WriteFile(part, []byte("half a download"), 0o644)
	f, err := os.Open(part)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX) // a download in progress
	if _, err := s.Install(ctx, src, "", nil); !errors.Is(err, ErrBusy) {
		t.Errorf("install during a download: %v", err)
	}
	if b, _ := os.ReadFile(part); string(b) != "half a download" {
		t.Errorf("the download's .part was changed to %q", b)
	}
	f.Close()

	if _, err := s.Install(ctx, src, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.LastFailure("tiny.gguf"); ok {
		t.Error("the failure record outlived the install")
	}
}
