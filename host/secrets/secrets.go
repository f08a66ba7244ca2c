package secrets

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/rs/zerolog"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/detect"
	"github.com/zricethezav/gitleaks/v8/logging"
	"github.com/zricethezav/gitleaks/v8/report"
)

// Finding is one secret in a text.
type Finding struct {
	// Rule is the id of the gitleaks rule that found it
	// ("aws-access-token", "private-key", "generic-api-key", ...).
	Rule string
	// Line is the 1-based line of the text on which the secret starts,
	// counting "\n" (so a "\r\n" text counts the same lines).
	Line int
	// Fingerprint names the secret without revealing it: the first 4
	// characters of the unpadded upper-case base32 of SHA-256 of its
	// bytes. It is stable: the same secret always gives the same one.
	// Four whole characters of the hash (its first: the last character
	// of a 32-byte hash in base32 holds one bit), 20 bits, so a
	// fingerprint tells about a million secrets apart.
	Fingerprint string
	// Start and End are the byte offsets of the secret in the scanned
	// text: text[Start:End] is exactly the secret (not the key name or
	// quotes around it).
	Start, End int
}

// Scanner finds secrets with gitleaks' default rules. It is safe for
// concurrent use by any number of goroutines: gitleaks' detector only
// reads its compiled rules while it scans (its one counter is atomic),
// so Scanner shares one detector without a lock or a pool. The zero
// Scanner is not usable; build one with New.
type Scanner struct {
	d *detect.Detector
}

var (
	// newMu serialises New: gitleaks parses its default rules through
	// viper's process-wide instance, which is not safe for concurrent use.
	newMu sync.Mutex
	// quiet silences gitleaks' logger, once, before the first detector
	// exists: it logs a finding's secret at trace level, and memhost never
	// lets a secret's bytes reach a log.
	quiet sync.Once
)

// urlPasswordRule is memhost's one rule beside gitleaks' defaults, in
// gitleaks' own format: a password in a URL's user information
// ("postgres://app:hunter2@db/"), which no default rule knows, and which
// is how a database's or a broker's password is most often pasted. The
// password is the secret (the marker keeps the scheme, the user and the
// host); placeholders ("${DB_PASSWORD}", "password", "****", "<pass>")
// are not secrets.
const urlPasswordRule = `
[[rules]]
id = "url-password"
description = "A password in a URL's user information (scheme://user:password@host)."
regex = '''(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@'"<>]{0,64}:([^\s/:@'"<>]{4,128})@[a-z0-9\[]'''
secretGroup = 1
keywords = ["://"]
[[rules.allowlists]]
regexes = ['''(?i)^(\*+|x+|\.+|password|passwd|pass|pwd|secret|changeme|example|redacted|\$\{[^}]*\}|\$\(.*\)|\$[a-z_][a-z0-9_]*|<[^>]*>|\{\{.*\}\}|%[a-z_]+%)$''']
`

// defaultDetector is gitleaks' detector with its default rules and
// urlPasswordRule, read as gitleaks reads a configuration file.
func defaultDetector() (*detect.Detector, error) {
	viper.SetConfigType("toml")
	if err := viper.ReadConfig(strings.NewReader(config.DefaultConfig + urlPasswordRule)); err != nil {
		return nil, err
	}
	var vc config.ViperConfig
	if err := viper.Unmarshal(&vc); err != nil {
		return nil, err
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, err
	}
	return detect.NewDetector(cfg), nil
}

// New compiles gitleaks' default rule set into a Scanner. It is expensive
// (about 50 ms and 25 MB allocated, 14 MB of it kept: see doc.go), so
// build one Scanner per process and share it. Its only error is gitleaks
// failing to read its own embedded rules.
func New() (*Scanner, error) {
	quiet.Do(func() { logging.Logger = zerolog.Nop() })
	newMu.Lock()
	d, err := defaultDetector()
	newMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("secrets: gitleaks default rules: %w", err)
	}
	// A "gitleaks:allow" comment exempts a line in a repository; in what an
	// agent writes it would be a way to keep a secret unredacted.
	d.IgnoreGitleaksAllow = true
	// No decoding passes: a finding in decoded base64 or hex has no bytes
	// of its own in the text to point at.
	d.MaxDecodeDepth = 0
	d.MaxTargetMegaBytes = 0
	return &Scanner{d: d}, nil
}

// Scan returns the secrets in text, sorted by Start. Findings never
// overlap: secrets found by several rules, or overlapping, are merged
// into one finding that covers them all and keeps the rule of the one
// that starts first (the longest of those on a tie). A finding inside a
// redaction marker (see Marker) is not reported, so scanning redacted
// text finds nothing new.
func (s *Scanner) Scan(text string) []Finding {
	if text == "" {
		return nil
	}
	raw := s.d.DetectString(text)
	if len(raw) == 0 {
		return nil
	}
	nl := newlines(text)
	var fs []Finding
	for _, r := range raw {
		for _, sp := range s.locate(text, nl, r) {
			fs = append(fs, Finding{Rule: r.RuleID, Start: sp[0], End: sp[1]})
		}
	}
	fs = dropInMarkers(text, fs, s.d.Config.Rules)
	fs = merge(fs)
	for i := range fs {
		f := &fs[i]
		f.Line = 1 + sort.SearchInts(nl, f.Start)
		f.Fingerprint = fingerprint(text[f.Start:f.End])
	}
	return fs
}

// locate turns gitleaks' line and column of a finding's match into the
// byte span of its secret. gitleaks counts lines from 0 in a string
// fragment, and a column as the distance from the previous line's "\n"
// byte (plus one on the first line), in bytes, so the match starts at
// lineBase+column-1. It reports the match with leading newlines trimmed,
// and the secret as the rule's capture group taken from the match.
//
// If the match cannot be found where gitleaks says (a future change in
// its arithmetic), every occurrence of the secret is reported instead:
// a secret must never survive redaction because of an offset bug.
func (s *Scanner) locate(text string, nl []int, r report.Finding) [][2]int {
	if r.Secret == "" {
		return nil
	}
	start := -1
	if r.StartLine >= 0 && r.StartLine <= len(nl) && r.StartColumn >= 1 {
		base := 0
		if r.StartLine > 0 {
			base = nl[r.StartLine-1]
		}
		start = base + r.StartColumn - 1
	}
	if start >= 0 && start <= len(text) && r.Match != "" {
		for start < len(text) && text[start] == '\n' && !strings.HasPrefix(text[start:], r.Match) {
			start++
		}
		if strings.HasPrefix(text[start:], r.Match) {
			if off := secretOffset(s.d.Config.Rules[r.RuleID], r.Match, r.Secret); off >= 0 {
				return [][2]int{{start + off, start + off + len(r.Secret)}}
			}
		}
	}
	var spans [][2]int
	for at := 0; ; {
		i := strings.Index(text[at:], r.Secret)
		if i < 0 {
			return spans
		}
		spans = append(spans, [2]int{at + i, at + i + len(r.Secret)})
		at += i + len(r.Secret)
	}
}

// secretOffset returns where the secret starts within the match, choosing
// the capture group as gitleaks does (the rule's secretGroup, or else the
// first non-empty group), or -1.
func secretOffset(rule config.Rule, match, secret string) int {
	if secret == match {
		return 0
	}
	if rule.Regex != nil {
		if m := rule.Regex.FindStringSubmatchIndex(match); m != nil {
			g := -1
			if rule.SecretGroup > 0 {
				g = rule.SecretGroup
			} else {
				for i := 1; 2*i+1 < len(m); i++ {
					if m[2*i] >= 0 && m[2*i+1] > m[2*i] {
						g = i
						break
					}
				}
			}
			if g > 0 && 2*g+1 < len(m) && m[2*g] >= 0 && match[m[2*g]:m[2*g+1]] == secret {
				return m[2*g]
			}
		}
	}
	return strings.Index(match, secret)
}

// merge sorts findings by Start (longest first on a tie) and merges the
// overlapping ones.
func merge(fs []Finding) []Finding {
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.End != b.End {
			return a.End > b.End
		}
		return a.Rule < b.Rule
	})
	out := fs[:0]
	for _, f := range fs {
		if n := len(out); n > 0 && f.Start < out[n-1].End {
			out[n-1].End = max(out[n-1].End, f.End)
			continue
		}
		out = append(out, f)
	}
	return out
}

// newlines returns the offsets of the "\n" bytes of text.
func newlines(text string) []int {
	var nl []int
	for i := 0; ; {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return nl
		}
		nl = append(nl, i+j)
		i += j + 1
	}
}

var fingerprintEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// fingerprint is Finding.Fingerprint of secret.
func fingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	enc := fingerprintEncoding.EncodeToString(sum[:])
	return enc[:4]
}

const (
	markerOpen  = "[secret redacted: "
	markerSep   = " …"
	markerClose = "]"
)

// Marker is what Redact puts in place of a secret:
// "[secret redacted: <rule> …<fingerprint>]", for example
// "[secret redacted: aws-access-token …7Q2A]". It is one line, holds no
// quote, backslash or control character, and is never itself a finding.
func Marker(f Finding) string {
	return markerOpen + f.Rule + markerSep + f.Fingerprint + markerClose
}

// dropInMarkers removes the findings that lie inside a redaction marker
// already in text. Only a marker naming a real rule and a well-formed
// fingerprint counts, so nothing can be hidden from redaction by dressing
// it up as a marker: its rule and fingerprint are all the bytes it has.
func dropInMarkers(text string, fs []Finding, rules map[string]config.Rule) []Finding {
	if !strings.Contains(text, markerOpen) {
		return fs
	}
	var spans [][2]int
	for at := 0; ; {
		i := strings.Index(text[at:], markerOpen)
		if i < 0 {
			break
		}
		start := at + i
		at = start + len(markerOpen)
		rule, rest, ok := strings.Cut(text[at:], markerSep)
		if !ok || len(rest) < 4+len(markerClose) {
			continue
		}
		if _, known := rules[rule]; !known || !isFingerprint(rest[:4]) || !strings.HasPrefix(rest[4:], markerClose) {
			continue
		}
		end := at + len(rule) + len(markerSep) + 4 + len(markerClose)
		spans = append(spans, [2]int{start, end})
		at = end
	}
	if len(spans) == 0 {
		return fs
	}
	out := fs[:0]
	for _, f := range fs {
		inside := false
		for _, sp := range spans {
			if sp[0] <= f.Start && f.End <= sp[1] {
				inside = true
				break
			}
		}
		if !inside {
			out = append(out, f)
		}
	}
	return out
}

func isFingerprint(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('A' <= c && c <= 'Z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return len(s) == 4
}
