// Package modelstore keeps embedding models (GGUF files) in a folder,
// $MEMHOST_HOME/models: it resolves a model given as a path, a name or a
// URL, downloads models resumably (HTTP Range) with SHA-256 verification,
// and lists and removes them. It is pure Go, shared by the local provider
// plugin and the `memhost models` commands.
//
// A download is written to NAME.part beside its final place and renamed
// only when complete and verified, so a model in the folder is always
// whole; an interrupted download resumes from the .part file, only while
// the server holds the file it began (the validator kept beside it in
// .NAME.part.json, sent as If-Range: resume.go).
package modelstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/internal/fsx"
)

// The default model: all-MiniLM-L6-v2, 384 dimensions, 21 MB.
const (
	DefaultName   = "all-MiniLM-L6-v2-Q4_K_M.gguf"
	DefaultURL    = "https://huggingface.co/second-state/All-MiniLM-L6-v2-Embedding-GGUF/resolve/main/all-MiniLM-L6-v2-Q4_K_M.gguf"
	DefaultSHA256 = "2ec4cee28a27a9c973d5f5230930d6ef6e52694bd2bc71be26a9bef5b1d755e6"
)

// Errors callers branch on.
var (
	ErrChecksum = errors.New("checksum mismatch")
	ErrNotFound = errors.New("no such model")
	// ErrBusy: another process is downloading the same model.
	ErrBusy = errors.New("another process is downloading this model")
	// ErrBadName: a model name, path or URL that cannot name a model (a
	// name with a folder in it, a control character); the error says why.
	ErrBadName = errors.New("not a model name")
)

// badName is an ErrBadName in its own words.
type badName string

func (e badName) Error() string        { return string(e) }
func (e badName) Is(target error) bool { return target == ErrBadName }

// checkArg refuses a model argument (a name, path or URL) holding a
// control character: no file or URL has one, and the file system's or the
// URL parser's refusal would not say which input was wrong.
func checkArg(what, s string) error {
	for _, r := range s {
		if unicode.IsControl(r) {
			return badName(fmt.Sprintf("%s %q holds a control character (%U)", what, s, r))
		}
	}
	return nil
}

// Store is a folder of models.
type Store struct {
	Dir string
	// Client makes the downloads; nil means a client with no overall
	// timeout (models are large) but a 30 s connect/header timeout.
	Client *http.Client
}

// Ref is a model as a user names it, resolved.
type Ref struct {
	Name   string // file name in the store, e.g. all-MiniLM-L6-v2-Q4_K_M.gguf
	Path   string // where the file is (or will be)
	URL    string // where to download it from, if it is not there; "" for local paths
	SHA256 string // expected digest, lower-case hex; "" when unknown
}

// Resolve turns a model option into a Ref: an existing file path; a URL
// (downloaded under its file name); or a name in the store ("" or the
// default name means the default model, fetched from defaultURL when
// missing — pass "" for DefaultURL).
func (s *Store) Resolve(model, defaultURL, sha string) (Ref, error) {
	if defaultURL == "" {
		defaultURL = DefaultURL
	}
	if err := checkArg("model", model); err != nil {
		return Ref{}, err
	}
	if err := checkArg("model URL", defaultURL); err != nil {
		return Ref{}, err
	}
	switch {
	case model == "" || model == DefaultName:
		if sha == "" {
			sha = DefaultSHA256
		}
		return Ref{Name: DefaultName, Path: filepath.Join(s.Dir, DefaultName), URL: defaultURL, SHA256: strings.ToLower(sha)}, nil
	case strings.HasPrefix(model, "http://") || strings.HasPrefix(model, "https://"):
		u, err := url.Parse(model)
		if err != nil {
			return Ref{}, fmt.Errorf("model URL %q: %w", model, err)
		}
		name := path.Base(u.Path)
		if name == "" || name == "/" || name == "." || !strings.HasSuffix(strings.ToLower(name), ".gguf") {
			return Ref{}, fmt.Errorf("model URL %q does not end in a .gguf file name", model)
		}
		return Ref{Name: name, Path: filepath.Join(s.Dir, name), URL: model, SHA256: strings.ToLower(sha)}, nil
	case strings.ContainsRune(model, os.PathSeparator) || strings.HasPrefix(model, "."):
		abs, err := filepath.Abs(model)
		if err != nil {
			return Ref{}, err
		}
		if _, err := os.Stat(abs); err != nil {
			return Ref{}, fmt.Errorf("%w: %s", ErrNotFound, model)
		}
		return Ref{Name: filepath.Base(abs), Path: abs, SHA256: strings.ToLower(sha)}, nil
	}
	name := model
	if !strings.HasSuffix(strings.ToLower(name), ".gguf") {
		name += ".gguf"
	}
	p := filepath.Join(s.Dir, name)
	if _, err := os.Stat(p); err != nil {
		return Ref{}, fmt.Errorf("%w: %s is not in %s (memhost models pull URL, or place the .gguf file there)", ErrNotFound, model, s.Dir)
	}
	return Ref{Name: name, Path: p, SHA256: strings.ToLower(sha)}, nil
}

// Present reports whether the model file exists.
func (r Ref) Present() bool {
	fi, err := os.Stat(r.Path)
	return err == nil && fi.Mode().IsRegular()
}

// Progress is called after every read of a download (or copy); total is -1
// when unknown. It is called often: a consumer that draws throttles, and
// keeps the newest figure, since the next read may block for long (a
// stalled download must show what had arrived).
type Progress func(done, total int64)

// Pull downloads ref.URL to ref.Path, resuming a .part file left by an
// interrupted download of the same file (else starting over: resume.go),
// and verifies ref.SHA256 when set. On a checksum
// mismatch the partial file is removed. It does nothing when the file is
// already there. A failed download is recorded (LastFailure) for every
// process to back off from; a successful one clears the record.
func (s *Store) Pull(ctx context.Context, ref Ref, progress Progress) error {
	if ref.Present() {
		return nil
	}
	err := s.pull(ctx, ref, progress)
	switch {
	case err == nil:
		s.clearFailure(ref.Name)
	case ctx.Err() == nil && !errors.Is(err, ErrBusy) && !errors.Is(err, ErrNotFound):
		s.recordFailure(ref.Name, err, time.Now())
	}
	return err
}

func (s *Store) pull(ctx context.Context, ref Ref, progress Progress) (err error) {
	if ref.URL == "" {
		return fmt.Errorf("%w: %s", ErrNotFound, ref.Path)
	}
	if err := os.MkdirAll(filepath.Dir(ref.Path), 0o700); err != nil {
		return err
	}
	part := ref.Path + ".part"
	f, err := os.OpenFile(part, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	// One downloader per file: two appending to one .part would corrupt it.
	if err := fsx.TryLockFile(f); err != nil {
		if errors.Is(err, fsx.ErrLocked) {
			return fmt.Errorf("%w: %s", ErrBusy, ref.Name)
		}
		return err
	}
	if ref.Present() { // finished by another process while we waited for the file
		os.Remove(part)
		return nil
	}
	defer func() {
		// A download that never got a byte leaves no empty .part behind
		// (removed while locked: no other process is writing it).
		if fi, serr := f.Stat(); err != nil && serr == nil && fi.Size() == 0 {
			os.Remove(part)
			dropResume(part)
		}
	}()
	have, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	state, pinned := readResume(part)
	if have > 0 && !pinned {
		// Nothing ties these bytes to a version of the file (resume.go).
		if err := startOver(f, part); err != nil {
			return err
		}
		have = 0
	}
	resp, err := s.get(ctx, ref.URL, have, state)
	if err != nil {
		return err
	}
	defer func() { resp.Body.Close() }()
	if have > 0 && !fits(resp, have, state) {
		// Not the rest of the partial file, whose bytes it would be
		// spliced onto: they are dropped, and the file asked for whole.
		resp.Body.Close()
		if err := startOver(f, part); err != nil {
			return err
		}
		have = 0
		if resp, err = s.get(ctx, ref.URL, 0, resumeState{}); err != nil {
			return err
		}
	}
	total := int64(-1)
	switch {
	case resp.StatusCode == http.StatusPartialContent && have > 0:
		total, _ = continues(resp, have, state)
	case resp.StatusCode == http.StatusOK:
		// The whole file: the first try, a server that ignores Range, or
		// a file changed since the partial one began (If-Range). Its
		// bytes replace the partial ones, tied to its validator.
		if err := startOver(f, part); err != nil {
			return err
		}
		if err := saveResume(part, stateOf(resp)); err != nil {
			return err
		}
		have, total = 0, resp.ContentLength
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && have > 0:
		total = have // the partial file is the whole file (fits): verified below
	default:
		return fmt.Errorf("downloading %s: server answered %s", ref.URL, resp.Status)
	}
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		if err := copyProgress(ctx, f, resp.Body, have, total, progress); err != nil {
			return fmt.Errorf("downloading %s (%s so far; run again to resume): %w", ref.URL, HumanSize(have), err)
		}
	}
	if err := f.Sync(); err != nil {
		return diskError(err)
	}
	if ref.SHA256 != "" {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		got, err := hashReader(f)
		if err != nil {
			return err
		}
		if got != ref.SHA256 {
			f.Close()
			os.Remove(part)
			dropResume(part)
			return fmt.Errorf("%w: %s from %s has sha256 %s, want %s; the download was removed", ErrChecksum, ref.Name, ref.URL, got, ref.SHA256)
		}
	}
	if err := f.Close(); err != nil {
		return diskError(err)
	}
	if err := fsx.Rename(part, ref.Path); err != nil {
		return err
	}
	dropResume(part) // nothing left to resume
	return nil
}

// get asks for the file at addr, from byte have on when have > 0, pinned
// by If-Range to the version rs names (resume.go).
func (s *Store) get(ctx context.Context, addr string, have int64, rs resumeState) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, addr, nil)
	if err != nil {
		return nil, err
	}
	if have > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(have, 10)+"-")
		req.Header.Set("If-Range", rs.validator())
	}
	resp, err := s.client().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, below
		}
		return nil, fmt.Errorf("downloading %s: %w", addr, err)
	}
	return resp, nil
}

// startOver empties the partial download f and drops its resumeState,
// the emptied file flushed first: a crash must never leave the old bytes
// with a newer validator beside them.
func startOver(f *os.File, part string) error {
	if err := dropResume(part); err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return diskError(err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return diskError(f.Sync())
}

// FileSHA256 returns the SHA-256 of a file, hex.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return hashReader(f)
}

func hashReader(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (s *Store) client() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = 30 * time.Second
	return &http.Client{Transport: t}
}

func copyProgress(ctx context.Context, w io.Writer, r io.Reader, done, total int64, progress Progress) error {
	buf := make([]byte, 256<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return diskError(werr)
			}
			done += int64(n)
			if progress != nil {
				progress(done, total)
			}
		}
		if err == io.EOF {
			if total >= 0 && done < total {
				return io.ErrUnexpectedEOF
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// diskError says "disk full" in words people know.
func diskError(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("disk full: %w", err)
	}
	return err
}

// HumanSize is n bytes as "1.5 MB", "12.0 KB" or "512 bytes".
func HumanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Model is a file in the store (the API's models list).
type Model = memhost.Model

// List returns the store's models and partial downloads, by name.
func (s *Store) List() ([]Model, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return []Model{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := []Model{}
	for _, e := range entries {
		name := e.Name()
		partial := strings.HasSuffix(name, ".gguf.part")
		if !partial && !strings.HasSuffix(strings.ToLower(name), ".gguf") {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		out = append(out, Model{Name: strings.TrimSuffix(name, ".part"), Path: filepath.Join(s.Dir, name), Size: fi.Size(),
			Partial: partial, Modified: fi.ModTime().UTC().Format(time.RFC3339)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Remove deletes a model (and any partial download of it, with what was
// kept to resume it) by name.
func (s *Store) Remove(name string) error {
	switch {
	case name == "":
		return badName("no model name given: give a name from memhost models list")
	case strings.ContainsAny(name, `/\`) || name == "." || name == "..":
		return badName(fmt.Sprintf("model name %q is not a file name in the models folder: give a name from memhost models list", name))
	}
	if err := checkArg("model name", name); err != nil {
		return err
	}
	if !strings.HasSuffix(strings.ToLower(name), ".gguf") {
		name += ".gguf"
	}
	if len(name)+len(".part") > 255 { // no such file can be in the folder
		return fmt.Errorf("%w: %.60s… (%d bytes)", ErrNotFound, name, len(name))
	}
	p := filepath.Join(s.Dir, name)
	err1 := os.Remove(p)
	err2 := os.Remove(p + ".part")
	dropResume(p + ".part")
	if errors.Is(err1, os.ErrNotExist) && errors.Is(err2, os.ErrNotExist) {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	derived, _ := filepath.Glob(filepath.Join(s.Dir, "."+globEscape(strings.TrimSuffix(name, ".gguf"))+".*"+derivedSuffix))
	for _, d := range derived {
		os.Remove(d)
	}
	if err1 != nil && !errors.Is(err1, os.ErrNotExist) {
		return err1
	}
	return nil
}

// derivedSuffix ends the names of files a provider derives from a model
// (DerivedPath).
const derivedSuffix = ".derived"

// DerivedPath is where a provider keeps a file it derives from the model
// at modelPath (a copy in another layout, say), named by the model's
// SHA-256 digest and the kind of copy: hidden in the models folder, not a
// model List shows, and removed with its model by Remove. A model changed
// under the same name gets a new path, so a derived file never goes stale.
func (s *Store) DerivedPath(modelPath, digest, kind string) string {
	base := strings.TrimSuffix(filepath.Base(modelPath), filepath.Ext(modelPath))
	return filepath.Join(s.Dir, "."+base+"."+digest[:min(16, len(digest))]+"."+kind+derivedSuffix)
}

func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// LocalSource returns the file a model argument names when it is a local
// file (a path with a folder in it, or a file:// URL), and whether it is.
func LocalSource(model string) (string, bool) {
	if rest, ok := strings.CutPrefix(model, "file://"); ok {
		return rest, true
	}
	if strings.HasPrefix(model, "http://") || strings.HasPrefix(model, "https://") {
		return "", false
	}
	return model, strings.ContainsRune(model, os.PathSeparator) || strings.HasPrefix(model, ".")
}

// Install copies the model file at src into the store under its own name,
// as Pull does a download: through a .part file flushed to disk, checked
// against sha (or, under the default model's name, its known digest), then
// renamed into place. A model of that name already there and identical is
// left alone; a different one is an error (remove it first).
func (s *Store) Install(ctx context.Context, src, sha string, progress Progress) (Ref, error) {
	if err := checkArg("model file", src); err != nil {
		return Ref{}, err
	}
	in, err := os.Open(src)
	if errors.Is(err, fs.ErrNotExist) {
		return Ref{}, fmt.Errorf("%w: %s", ErrNotFound, src)
	}
	if err != nil {
		return Ref{}, err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return Ref{}, err
	}
	if !fi.Mode().IsRegular() {
		return Ref{}, fmt.Errorf("%s is not a file", src)
	}
	name := filepath.Base(src)
	if !strings.HasSuffix(strings.ToLower(name), ".gguf") {
		return Ref{}, fmt.Errorf("%s is not a .gguf model file", src)
	}
	if sha == "" && name == DefaultName {
		sha = DefaultSHA256
	}
	ref := Ref{Name: name, Path: filepath.Join(s.Dir, name), SHA256: strings.ToLower(sha)}
	got, err := hashReader(in)
	if err != nil {
		return ref, err
	}
	if ref.SHA256 != "" && got != ref.SHA256 {
		return ref, fmt.Errorf("%w: %s has sha256 %s, want %s; nothing was installed", ErrChecksum, src, got, ref.SHA256)
	}
	if ref.Present() {
		have, err := FileSHA256(ref.Path)
		if err != nil {
			return ref, err
		}
		if have != got {
			return ref, fmt.Errorf("%s holds another model of the name %s (sha256 %s, this one %s): memhost models rm %s first", s.Dir, name, have, got, name)
		}
		return ref, nil
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return ref, err
	}
	part := ref.Path + ".part"
	// Not O_TRUNC: the .part may be a download in progress, until locked.
	out, err := os.OpenFile(part, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return ref, err
	}
	defer out.Close()
	if err := fsx.TryLockFile(out); err != nil {
		if errors.Is(err, fsx.ErrLocked) {
			return ref, fmt.Errorf("%w: %s", ErrBusy, name)
		}
		return ref, err
	}
	// An interrupted download's bytes go, and what was kept to resume it.
	if err := startOver(out, part); err != nil {
		return ref, err
	}
	if _, err := in.Seek(0, io.SeekStart); err != nil {
		return ref, err
	}
	if err := copyProgress(ctx, out, in, 0, fi.Size(), progress); err != nil {
		os.Remove(part)
		return ref, diskError(err)
	}
	if err := out.Sync(); err != nil {
		os.Remove(part)
		return ref, diskError(err)
	}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return ref, err
	}
	if copied, err := hashReader(out); err != nil || copied != got {
		os.Remove(part)
		return ref, fmt.Errorf("copying %s: the copy differs from the file (sha256 %s, want %s): %v", src, copied, got, err)
	}
	if err := out.Close(); err != nil {
		os.Remove(part)
		return ref, diskError(err)
	}
	if err := fsx.Rename(part, ref.Path); err != nil {
		return ref, err
	}
	s.clearFailure(name) // its failed downloads are history now
	return ref, nil
}
