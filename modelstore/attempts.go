package modelstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/memhost/memhost/internal/fsx"
)

// Failure is the record of a model's failed downloads, kept beside the
// models (.NAME.failed.json) so that every process backs off from a
// download that keeps failing, not only the one that saw it fail: without
// it each one-shot command would try again, and say so, on every call.
type Failure struct {
	Name    string    `json:"name"`
	At      time.Time `json:"at"`      // the last attempt
	Err     string    `json:"error"`   // what it failed with
	Offline bool      `json:"offline"` // no network: the host was not found or not reachable
	Count   int       `json:"count"`   // failed attempts in a row
}

// Backoff bounds: the first retry after firstRetry, doubling with each
// failure in a row up to maxRetry.
const (
	firstRetry = 30 * time.Second
	maxRetry   = 30 * time.Minute
)

// Next is when the download may be tried again.
func (f Failure) Next() time.Time {
	wait := firstRetry
	for i := 1; i < f.Count && wait < maxRetry; i++ {
		wait *= 2
	}
	return f.At.Add(min(wait, maxRetry))
}

// Reason is what a search says while the model stays missing after f: a
// short reason (the error itself is in the log and in memhost status), the
// same from the local plugin and from a host that did not start it.
func (f Failure) Reason() string {
	why := "download failed"
	if f.Offline {
		why = "offline"
	}
	return fmt.Sprintf("model not downloaded (%s); memhost models pull FILE|URL installs %s", why, f.Name)
}

func (s *Store) failurePath(name string) string {
	return filepath.Join(s.Dir, "."+name+".failed.json")
}

// LastFailure returns the record of name's failed downloads, if its last
// download failed.
func (s *Store) LastFailure(name string) (Failure, bool) {
	b, err := os.ReadFile(s.failurePath(name))
	if err != nil {
		return Failure{}, false
	}
	var f Failure
	if json.Unmarshal(b, &f) != nil || f.Count < 1 {
		return Failure{}, false
	}
	return f, true
}

// Failures returns the records of every model whose last download failed.
func (s *Store) Failures() []Failure {
	matches, _ := filepath.Glob(filepath.Join(s.Dir, ".*.failed.json"))
	var out []Failure
	for _, m := range matches {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "."), ".failed.json")
		if f, ok := s.LastFailure(name); ok {
			out = append(out, f)
		}
	}
	return out
}

// recordFailure counts one more failed download of name (best effort: the
// record only spaces out retries).
func (s *Store) recordFailure(name string, err error, now time.Time) {
	f, _ := s.LastFailure(name)
	f.Name, f.At, f.Err, f.Offline = name, now.UTC(), err.Error(), IsOffline(err)
	f.Count++
	b, _ := json.Marshal(f)
	fsx.WriteFileAtomic(s.failurePath(name), b, 0o600)
}

func (s *Store) clearFailure(name string) { os.Remove(s.failurePath(name)) }

// IsOffline reports whether err means the network (or the model's host)
// cannot be reached at all, as opposed to a server's refusal or a bad file.
func IsOffline(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns):
		return true
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ETIMEDOUT):
		return true
	case errors.As(err, &op) && op.Op == "dial":
		return true
	}
	return false
}
