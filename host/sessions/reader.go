package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one line of a JSONL file. A longer line is skipped by
// ReadLines, and Append refuses a turn whose line would be longer; a
// transcript turn is never near it.
const MaxLine = 64 << 20

// ErrStop, returned by a ReadLines function, ends the read without error.
var ErrStop = errors.New("stop reading")

// ReadLines calls fn with each non-blank line of r, trimmed of surrounding
// white space, and its 1-based number (counting from first, for a read that
// starts mid-file), until r ends or fn returns an error. A line longer than
// MaxLine is read past without being kept and given to fn as nil, which no
// JSON decoder takes, so callers count it as they count malformed lines
// and every line after it is still read. fn must not keep line: its bytes
// are reused.
func ReadLines(r io.Reader, first int, fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte // a line longer than br's buffer, gathered
	n := first - 1
	tooLong := false
	for {
		part, err := br.ReadSlice('\n')
		switch {
		case tooLong:
		case len(buf)+len(part) > MaxLine+1: // +1: the newline is not the line's
			tooLong, buf = true, buf[:0]
		case err == bufio.ErrBufferFull || len(buf) > 0:
			buf = append(buf, part...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("line %d: %w", n+1, err)
		}
		if err == io.EOF && len(part) == 0 && len(buf) == 0 && !tooLong {
			return nil
		}
		n++
		line := part
		if len(buf) > 0 {
			line = buf
		}
		line = bytes.TrimSpace(line)
		if tooLong {
			line = nil
		}
		if tooLong || len(line) > 0 {
			if ferr := fn(n, line); ferr != nil {
				if errors.Is(ferr, ErrStop) {
					return nil
				}
				return ferr
			}
		}
		buf, tooLong = buf[:0], false
		if err == io.EOF {
			return nil
		}
	}
}
