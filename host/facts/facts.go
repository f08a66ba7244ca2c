package facts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Dir is the notebook folder holding the entity pages.
const Dir = "knowledge/entities"

// Statuses of a fact.
const (
	Current    = "current"
	Superseded = "superseded" // struck through, and a newer fact supersedes it
	Forgotten  = "forgotten"  // struck through with a forgotten date
	Retired    = "retired"    // struck through by hand
)

// Links are the targets of the wikilinks in a value, as slugs:
// "works at [[Acme Corp|Acme]]" gives ["acme-corp"].
func Links(value string) []string {
	var out []string
	for _, m := range wikilink.FindAllStringSubmatch(value, -1) {
		target := m[1]
		if i := strings.IndexAny(target, "#|"); i >= 0 {
			target = target[:i]
		}
		if s := Slug(target); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var wikilink = regexp.MustCompile(`\[\[([^\[\]]+?)\]\]`)

// Slug is the page name of an entity: lower case, letters and digits
// kept, every run of anything else one hyphen ("Sarah Chen" → sarah-chen,
// "project:claude-cli" → project-claude-cli). "" when nothing is left.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > 100 {
		s = strings.TrimRight(s[:100], "-")
		for !validUTF8Tail(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

func validUTF8Tail(s string) bool { return strings.ToValidUTF8(s, "") == s }

// Path is the notebook path of an entity's page.
func Path(slug string) string { return Dir + "/" + slug + ".md" }

// SlugOf returns the entity slug of a notebook path, and whether the path
// is an entity page (a .md file directly in Dir).
func SlugOf(rel string) (string, bool) {
	rest, ok := strings.CutPrefix(rel, Dir+"/")
	if !ok || strings.Contains(rest, "/") || !strings.HasSuffix(strings.ToLower(rest), ".md") {
		return "", false
	}
	return rest[:len(rest)-3], true
}

// AttrKey is the form attributes are compared in: lower case, spaces
// collapsed.
func AttrKey(a string) string { return strings.Join(strings.Fields(strings.ToLower(a)), " ") }

// ValueKey is the form values are compared in: lower case, spaces
// collapsed, a trailing period dropped.
func ValueKey(v string) string {
	return strings.TrimSuffix(strings.Join(strings.Fields(strings.ToLower(v)), " "), ".")
}

// Errors of Check.
var (
	ErrBadValue     = errors.New("bad value")
	ErrBadAttribute = errors.New("bad attribute")
	ErrBadSource    = errors.New("bad source")
)

// CheckValue refuses a value that would not read back as itself from a
// page: empty, several lines, struck through, or ending in what reads as
// an inline field or a block id.
func CheckValue(v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return fmt.Errorf("%w: the value is empty", ErrBadValue)
	case strings.ContainsAny(v, "\r\n\x00"):
		return fmt.Errorf("%w: the value must be one line", ErrBadValue)
	case strings.HasPrefix(strings.TrimSpace(v), "~~"):
		return fmt.Errorf("%w: the value must not start with ~~ (strike-through marks history)", ErrBadValue)
	case strings.Contains(v, "::"):
		return fmt.Errorf("%w: the value must not contain \"::\" (it marks an inline field)", ErrBadValue)
	case blockID.MatchString(v):
		return fmt.Errorf("%w: the value must not end in a ^block-id", ErrBadValue)
	}
	return nil
}

// CheckAttribute refuses an attribute that cannot be an H2 heading.
func CheckAttribute(a string) error {
	switch {
	case AttrKey(a) == "":
		return fmt.Errorf("%w: the attribute is empty", ErrBadAttribute)
	case strings.ContainsAny(a, "\r\n\x00#[]"):
		return fmt.Errorf("%w: the attribute must be one line without #, [ or ]", ErrBadAttribute)
	case len(a) > 200:
		return fmt.Errorf("%w: the attribute is longer than 200 bytes", ErrBadAttribute)
	}
	return nil
}

// CheckSource refuses a source that would not fit in an inline field.
func CheckSource(s string) error {
	if strings.ContainsAny(s, "[]\r\n\x00") || strings.Contains(s, "::") {
		return fmt.Errorf("%w: the source must be one line without [, ] or ::", ErrBadSource)
	}
	return nil
}

// NewID makes a fact id from its content: "f" and 6 hex digits of a
// SHA-256 of the entity, attribute and value, longer when taken(id) says
// it is used (a value that comes back after it was superseded). The same
// fact gets the same id on every machine and every day, so pages written
// apart (federation) and test transcripts agree.
func NewID(entity, attribute, value string, taken func(string) bool) string {
	sum := sha256.Sum256([]byte(entity + "\x00" + AttrKey(attribute) + "\x00" + ValueKey(value)))
	h := hex.EncodeToString(sum[:])
	for n := 6; n < len(h); n++ {
		if id := "f" + h[:n]; taken == nil || !taken(id) {
			return id
		}
	}
	return "f" + h
}

// Date is the form of a fact's dates.
const Date = time.DateOnly

// FormatConfidence writes a confidence the way a page holds it.
func FormatConfidence(c float64) string { return strconv.FormatFloat(c, 'f', -1, 64) }

// ParseSource splits a source into its parts: "SESSION turn TURN" names a
// transcript turn; "PATH line N" (or "PATH:N") a page line. Other text is
// kept whole and returns zero parts.
func ParseSource(s string) (session, turn, path string, line int) {
	if a, b, ok := strings.Cut(s, " turn "); ok && !strings.ContainsAny(a, " ") && !strings.ContainsAny(b, " ") {
		return a, b, "", 0
	}
	if a, b, ok := strings.Cut(s, " line "); ok && strings.HasSuffix(a, ".md") {
		if n, err := strconv.Atoi(b); err == nil {
			return "", "", a, n
		}
	}
	return "", "", "", 0
}
