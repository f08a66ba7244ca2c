package episodes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/internal/origin"
)

// Session is one session's messages of a day, in the transcript's order.
type Session struct {
	ID    string
	Turns []memhost.Turn
}

// generatedKey marks a page memhost wrote; hashKey holds the SHA-256 of the
// page without its own line, so that any edit by a person shows.
const (
	generatedKey = "generated: memhost"
	hashKey      = "hash: sha256:"
)

// Render is the episode log of day (YYYY-MM-DD) holding ss, in the order
// given, with times in loc: frontmatter (date, channels, sessions,
// total_messages, then generatedKey and hashKey), then a section per
// session ("## Session: whatsapp/919876543210 (10:32 - 11:15)", the
// session id when its turns name no channel) and a "### User (10:32)"
// heading per turn. The same sessions give the same bytes.
func Render(day string, loc *time.Location, ss []Session) []byte {
	var channels []string
	total := 0
	for _, s := range ss {
		if c, _ := originOf(s); c != "" && !slices.Contains(channels, c) {
			channels = append(channels, c)
		}
		total += len(s.Turns)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "---\ndate: %s\nchannels: [%s]\nsessions: %d\ntotal_messages: %d\n%s\n", day, strings.Join(channels, ", "), len(ss), total, generatedKey)
	head := b.String()
	b.Reset()
	b.WriteString("---\n")
	for _, s := range ss {
		name := s.ID
		if c, src := originOf(s); c != "" {
			name = strings.TrimSuffix(c+"/"+src, "/")
		}
		first, _ := sessions.TurnTime(s.Turns[0].Timestamp, loc)
		last, _ := sessions.TurnTime(s.Turns[len(s.Turns)-1].Timestamp, loc)
		fmt.Fprintf(&b, "\n## Session: %s (%s - %s)\n", name, clock(first, loc), clock(last, loc))
		for _, t := range s.Turns {
			at, _ := sessions.TurnTime(t.Timestamp, loc)
			fmt.Fprintf(&b, "\n### %s (%s)\n%s\n", who(t), clock(at, loc), text(t.Content))
		}
	}
	return []byte(head + hashKey + digest(head+b.String()) + "\n" + b.String())
}

// Generated reports whether page is one Render wrote, and whether it is
// as written (no one edited it since).
func Generated(page []byte) (generated, intact bool) {
	s := string(page)
	end := strings.Index(s, "\n---\n")
	if !strings.HasPrefix(s, "---\n") || end < 0 || !strings.Contains(s[:end+1], "\n"+generatedKey+"\n") {
		return false, false
	}
	at := strings.Index(s[:end+1], "\n"+hashKey)
	if at < 0 {
		return true, false
	}
	line := s[at+1:]
	line = line[:strings.IndexByte(line, '\n')+1]
	rest := s[:at+1] + s[at+1+len(line):]
	return true, strings.TrimSuffix(strings.TrimPrefix(line, hashKey), "\n") == digest(rest)
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// originOf is the channel and source id a session's turns name: the
// first turn's that names a valid one.
func originOf(s Session) (channel, source string) {
	for _, t := range s.Turns {
		if t.Channel != "" && origin.Check(t.Channel, t.SourceID) == nil {
			return t.Channel, t.SourceID
		}
	}
	return "", ""
}

// who is a turn's heading: its speaker when the transcript names one,
// else its role ("User").
func who(t memhost.Turn) string {
	if s := strings.Join(strings.Fields(t.Speaker), " "); s != "" {
		return s
	}
	if t.Role == "" {
		return "Unknown"
	}
	return strings.ToUpper(t.Role[:1]) + t.Role[1:]
}

func clock(t time.Time, loc *time.Location) string { return t.In(loc).Format("15:04") }

// text is a turn's content as the page shows it: a line that would read
// as a heading outside a code fence is escaped ("\#"), so a turn cannot
// start a section of the page, and blank lines at its ends are dropped.
func text(s string) string {
	lines := strings.Split(strings.Trim(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
	fenced := markdown.Fenced(lines)
	for i, l := range lines {
		t := strings.TrimLeft(l, " ")
		if !fenced[i] && strings.HasPrefix(t, "#") && len(l)-len(t) < 4 {
			lines[i] = l[:len(l)-len(t)] + `\` + t
		}
	}
	return strings.Join(lines, "\n")
}
