package sessions

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one line of a JSONL file. A longer line is an error that
// names its number; a transcript turn is never near it.
const MaxLine = 64 << 20

// ErrStop, returned by a ReadLines function, ends the read without error.
var ErrStop = errors.New("stop reading")

// ReadLines calls fn with each non-blank line of r, trimmed of surrounding
// white space, and its 1-based number (counting from first, for a read that
// starts mid-file), until r ends or fn returns an error. fn must not keep
// line: its bytes are reused.
func ReadLines(r io.Reader, first int, fn func(n int, line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	n := first - 1
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := fn(n, line); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return nil
}
