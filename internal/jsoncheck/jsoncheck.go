// Package jsoncheck finds what encoding/json accepts without a word but
// does not decode faithfully: a \uXXXX escape of half a UTF-16 surrogate
// pair without its other half ("\ud800"), which it turns into U+FFFD. A
// program that refuses invalid UTF-8 (a request's text is stored as sent
// or not at all) refuses these escapes too: they are the same broken text
// written another way.
package jsoncheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
)

// A Surrogate is a lone surrogate escape found in a JSON text.
type Surrogate struct {
	// Escape is the escape as written, e.g. `\ud800`.
	Escape string
	// Offset is the byte offset of its backslash in the text.
	Offset int
	// Path is where it is in the value, by member names and array
	// indexes ("text", "set.model", "params.arguments.tags[2]"); "" when
	// it is in the top-level value itself. An escape in a member's name
	// has the path of the object holding it.
	Path string
}

// Field is the top-level member the escape is in ("set" for "set.model"),
// "" when none.
func (s *Surrogate) Field() string {
	f, _, _ := strings.Cut(s.Path, ".")
	f, _, _ = strings.Cut(f, "[")
	return f
}

func (s *Surrogate) Error() string {
	where := s.Path
	if where == "" {
		where = "the JSON value"
	}
	return fmt.Sprintf("%s holds %s at byte %d, half of a UTF-16 surrogate pair without the other half: not text", where, s.Escape, s.Offset)
}

// Find returns the first lone surrogate escape in the JSON text data, nil
// when there is none. It reads the text as JSON's strings and escapes
// delimit it; the path is found only for valid JSON.
func Find(data []byte) *Surrogate {
	in := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && i+1 < len(data) && data[i+1] == 'u':
			r, ok := hex4(data, i+2)
			if !ok {
				continue
			}
			if !utf16.IsSurrogate(r) {
				i += 5
				continue
			}
			if r < 0xdc00 { // the first half: the second must follow
				if i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					if r2, ok := hex4(data, i+8); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
						i += 11
						continue
					}
				}
			}
			return &Surrogate{Escape: string(data[i : i+6]), Offset: i, Path: pathAt(data, i)}
		case c == '\\':
			i++ // an escaped character: \" does not end the string
		}
	}
	return nil
}

func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(data[i:i+4]), 16, 16)
	return rune(n), err == nil
}

// pathAt returns the path of the string holding byte at of data.
func pathAt(data []byte, at int) string {
	type frame struct {
		object  bool
		key     string
		index   int
		wantKey bool
	}
	var stack []frame
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.object {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			} else {
				fmt.Fprintf(&b, "[%d]", f.index)
			}
		}
		return b.String()
	}
	// valueDone moves the holder of a value just read on to its next one.
	valueDone := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		start := int(dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		end := int(dec.InputOffset())
		inside := start <= at && at < end
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			if key, ok := tok.(string); ok {
				if inside { // in a member's name: the object's path
					stack = stack[:n-1]
					return path()
				}
				stack[n-1].key, stack[n-1].wantKey = key, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			if inside {
				return path()
			}
			valueDone()
		}
	}
}
