package sessions

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/memhost/memhost"
)

// Source is the result group of transcripts in the index.
const Source = "sessions"

// Meta is what a transcript chunk carries in the index (chunks.meta).
type Meta struct {
	Session   string   `json:"session"`
	Turns     []string `json:"turns"`
	Role      string   `json:"role,omitempty"`
	Speaker   string   `json:"speaker,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
	Channel   string   `json:"channel,omitempty"`
	SourceID  string   `json:"sourceId,omitempty"`
}

// ParseMeta reads a chunk's meta; a malformed one gives the zero Meta.
func ParseMeta(s string) Meta {
	var m Meta
	json.Unmarshal([]byte(s), &m)
	return m
}

// MetaSpeaker is ParseMeta(s).Speaker, without decoding the rest: a
// search reads it for each of its ~200 candidates (search.BySpeaker), and
// json.Unmarshal of the whole meta was 2 µs of the 2.5 each took. Meta is
// written by json.Marshal (no spaces; "speaker" is its only key of that
// name), so the key is found as written; a name with an escape in it is
// decoded properly.
func MetaSpeaker(s string) string {
	const key = `"speaker":"`
	i := strings.Index(s, key)
	if i < 0 {
		return ""
	}
	rest := s[i+len(key):]
	end := strings.IndexByte(rest, '"')
	if end < 0 || strings.IndexByte(rest[:end], '\\') >= 0 {
		return ParseMeta(s).Speaker
	}
	return rest[:end]
}

// Heading describes a transcript hit: "Caroline, 2023-05-08T13:56".
func (m Meta) Heading() string {
	who := m.Speaker
	if who == "" {
		who = m.Role
	}
	if m.Timestamp != "" {
		who += ", " + m.Timestamp
	}
	return who
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidID reports whether id can name a session: letters, digits, '.', '_'
// and '-', starting with a letter or digit, at most 128.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Path is the index path of a session's transcript: "sessions/ID.jsonl".
func Path(id string) string { return memhost.SessionPath(id) }

// IsPath reports whether an index path names a transcript.
func IsPath(rel string) bool {
	return strings.HasPrefix(rel, "sessions/") && strings.HasSuffix(rel, ".jsonl")
}

// IDOf is the session id of a transcript's index path.
func IDOf(rel string) string {
	return strings.TrimSuffix(strings.TrimPrefix(rel, "sessions/"), ".jsonl")
}

// Roles a turn appended by memhost may have.
var Roles = []string{"user", "assistant", "system", "tool"}
