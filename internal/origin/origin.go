// Package origin checks where a turn came from: its channel ("whatsapp",
// "telegram", "cli") and its source id in that channel (a chat, a
// contact, a jid). Requests check them on both sides
// of the wire, so it is a leaf the root package may import.
package origin

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memhost/memhost/fault"
)

// MaxSource is the longest source id, in characters.
const MaxSource = 256

var channelWord = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Check checks a channel and a source id, either of which may be "": a
// channel is 1-64 letters, digits, '.', '_' or '-'; a source id is at
// most MaxSource printable characters but spaces, and comes with its
// channel.
func Check(channel, sourceID string) error {
	if channel != "" && !channelWord.MatchString(channel) {
		return fault.BadInputf("channel", "channel %q: use letters, digits, '.', '_' and '-' (at most 64), such as whatsapp", channel)
	}
	if sourceID == "" {
		return nil
	}
	// Printable characters only: no space, no control character and no
	// invisible format character (U+202E would reverse what a terminal
	// shows of the rest).
	bad := func(r rune) bool { return !unicode.IsPrint(r) || r == ' ' || r == utf8.RuneError }
	if !utf8.ValidString(sourceID) || utf8.RuneCountInString(sourceID) > MaxSource || strings.IndexFunc(sourceID, bad) >= 0 {
		return fault.BadInputf("sourceId", "source id %q: at most %d printable characters, without spaces", sourceID, MaxSource)
	}
	if channel == "" {
		return fault.BadInputf("sourceId", "source id %q needs its channel (such as whatsapp)", sourceID)
	}
	return nil
}
