package modelstore

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/memhost/memhost/internal/fsx"
)

// A partial download resumes only where nothing can splice two versions
// of the file: the request for the rest names, in If-Range, the validator
// of the answer its first byte came in, so that a server holding another
// file by now answers with the whole of it (200) instead of its rest; and
// a 206 counts only when its Content-Range starts at the partial file's
// end and names the size the file had. A partial file with no validator
// (its server gave none) is not resumed but started over, as browsers do.

// resumeState is what a partial download (NAME.part) was started from,
// kept beside it (resumePath) for as long as it is.
type resumeState struct {
	ETag         string `json:"etag,omitempty"`         // a strong entity tag
	LastModified string `json:"lastModified,omitempty"` // when the answer had no strong ETag
	Size         int64  `json:"size"`                   // the whole file's, -1 when unknown
}

// validator is what If-Range sends: the strong ETag, else Last-Modified.
func (rs resumeState) validator() string {
	if rs.ETag != "" {
		return rs.ETag
	}
	return rs.LastModified
}

// resumePath is where the resumeState of the partial download part is
// kept: beside it, hidden, and not a name List shows.
func resumePath(part string) string {
	dir, name := filepath.Split(part)
	return filepath.Join(dir, "."+name+".json")
}

// readResume is the resumeState kept for part; ok is false when none is,
// or it names no validator.
func readResume(part string) (rs resumeState, ok bool) {
	b, err := os.ReadFile(resumePath(part))
	if err != nil || json.Unmarshal(b, &rs) != nil {
		return resumeState{}, false
	}
	return rs, rs.validator() != ""
}

// stateOf is the resumeState of a whole-file answer (200). A weak ETag
// does not pin bytes, so it is not kept; a body the client decoded
// (Content-Encoding) has offsets no range request can continue.
func stateOf(resp *http.Response) resumeState {
	rs := resumeState{Size: resp.ContentLength}
	if resp.Uncompressed {
		return rs
	}
	if et := resp.Header.Get("ETag"); strings.HasPrefix(et, `"`) {
		rs.ETag = et
	} else {
		rs.LastModified = resp.Header.Get("Last-Modified")
	}
	return rs
}

// saveResume keeps rs beside part, or removes what was kept when rs has
// no validator: a partial download of that answer starts over.
func saveResume(part string, rs resumeState) error {
	if rs.validator() == "" {
		return dropResume(part)
	}
	b, err := json.Marshal(rs)
	if err != nil {
		return err
	}
	return diskError(fsx.WriteFileAtomic(resumePath(part), b, 0o600))
}

func dropResume(part string) error {
	if err := os.Remove(resumePath(part)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// contentRange parses a Content-Range of bytes: "bytes FIRST-LAST/SIZE"
// (size -1 for "*"), or, with first -1, "bytes */SIZE" (a 416's).
func contentRange(h string) (first, last, size int64, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	rng, sz, found := strings.Cut(spec, "/")
	if !found {
		return 0, 0, 0, false
	}
	size = -1
	if sz != "*" {
		n, err := strconv.ParseInt(sz, 10, 64)
		if err != nil || n < 0 {
			return 0, 0, 0, false
		}
		size = n
	}
	if rng == "*" {
		return -1, -1, size, size >= 0
	}
	a, b, found := strings.Cut(rng, "-")
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if !found || err1 != nil || err2 != nil || first < 0 || last < first || size >= 0 && last >= size {
		return 0, 0, 0, false
	}
	return first, last, size, true
}

// fits reports whether resp, the answer to the request for the bytes
// from have on, can go on from the partial file: a 206 that continues it,
// a 416 that says it is whole. Any other answer fits as well: a 200
// replaces the partial file, an error is the download's.
func fits(resp *http.Response, have int64, rs resumeState) bool {
	switch resp.StatusCode {
	case http.StatusPartialContent:
		_, ok := continues(resp, have, rs)
		return ok
	case http.StatusRequestedRangeNotSatisfiable:
		return whole(resp, have, rs)
	}
	return true
}

// continues reports whether a 206 answer to the request for the bytes
// from have on carries exactly those: its range starts at have, the file
// it is part of has the size rs recorded (when both are known), and its
// body is as long as the range. total is the whole file's size, -1 when
// unknown.
func continues(resp *http.Response, have int64, rs resumeState) (total int64, ok bool) {
	first, last, size, ok := contentRange(resp.Header.Get("Content-Range"))
	switch {
	case !ok || first != have:
		return 0, false
	case size >= 0 && rs.Size >= 0 && size != rs.Size:
		return 0, false
	case resp.ContentLength >= 0 && resp.ContentLength != last-first+1:
		return 0, false
	case size >= 0:
		return size, true
	case rs.Size >= 0:
		return rs.Size, true
	}
	return last + 1, true // a body that ends sooner is cut short
}

// whole reports whether a 416 answer to the request for the bytes from
// have on says the partial file is the whole file: the size it names
// (else the size rs recorded) is have.
func whole(resp *http.Response, have int64, rs resumeState) bool {
	if first, _, size, ok := contentRange(resp.Header.Get("Content-Range")); ok && first < 0 {
		return size == have && (rs.Size < 0 || rs.Size == have)
	}
	return rs.Size == have
}
