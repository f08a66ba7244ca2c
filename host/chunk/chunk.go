// Package chunk splits markdown pages into overlapping pieces for the index.
//
// A page's YAML frontmatter is not chunked: its keys are metadata (the
// indexer stores tags and aliases apart), not body text.
//
// A chunk never crosses an H1 or H2 heading: each H1/H2 section is chunked on
// its own. Inside a section, lines are packed greedily up to MaxTokens,
// preferring to end a chunk at a paragraph break, and the next chunk repeats
// whole lines from the end of the previous one, up to OverlapTokens. Line
// granularity keeps every chunk's 1-based line range exact; a single line too
// long for one chunk is cut into pieces at spaces.
package chunk

import (
	"strings"

	"unicode"
	"unicode/utf8"

	"github.com/memhost/memhost/host/markdown"
)

// Options tune the chunker.
type Options struct {
	MaxTokens     int // default 400 (~1600 characters of English)
	OverlapTokens int // default 80; must be less than MaxTokens
}

// DefaultOptions are the defaults of memory.chunking, and what Split
// uses when MaxTokens is not set.
func DefaultOptions() Options { return Options{MaxTokens: 400, OverlapTokens: 80} }

// Chunk is one piece of a page.
type Chunk struct {
	Heading   string // nearest heading line at or above StartLine, e.g. "## Sarah Chen"; "" if none
	StartLine int    // 1-based
	EndLine   int    // inclusive
	Text      string
}

// EstimateTokens approximates a tokenizer: four characters a token for
// alphabetic scripts, one token a character for CJK, which has no spaces and
// packs a word into one or two characters.
func EstimateTokens(s string) int {
	quarter := 0
	for _, r := range s {
		if r >= 0x1100 && isWide(r) {
			quarter += 4
		} else {
			quarter++
		}
	}
	return (quarter + 3) / 4
}

func isWide(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// unit is a line, or a piece of a line too long for one chunk.
type unit struct {
	line   int // 1-based
	text   string
	tokens int
	blank  bool
	// breakBefore: a paragraph boundary precedes this unit, a good place
	// to start a chunk.
	breakBefore bool
}

// Split chunks a markdown page.
func Split(text string, opt Options) []Chunk {
	if opt.MaxTokens <= 0 {
		opt = DefaultOptions()
	}
	if opt.OverlapTokens >= opt.MaxTokens || opt.OverlapTokens < 0 {
		opt.OverlapTokens = opt.MaxTokens / 5
	}
	lines := markdown.Lines(text)
	// Frontmatter is metadata, not text to find: its lines are skipped,
	// and the lines after it keep their numbers. A "# comment" or a "```"
	// in its YAML is neither a heading nor a fence.
	fm := markdown.FrontmatterLines(lines)
	levels := append(make([]int, fm), markdown.HeadingLevels(lines[fm:])...)
	var (
		out      []Chunk
		section  []unit
		headings = make([]string, len(lines)+1) // nearest heading per line
		nearest  string
		prevBlnk = true
	)
	for i, l := range lines {
		n, level := i+1, levels[i]
		if i < fm {
			continue
		}
		if level > 0 {
			nearest = strings.TrimSpace(l)
		}
		headings[n] = nearest
		if level == 1 || level == 2 {
			out = appendSection(out, section, headings, opt)
			section = section[:0]
		}
		blank := strings.TrimSpace(l) == ""
		brk := prevBlnk || level > 0
		prevBlnk = blank
		for j, piece := range cutLine(l, opt.MaxTokens, opt.MaxTokens-opt.OverlapTokens) {
			section = append(section, unit{line: n, text: piece, tokens: EstimateTokens(piece) + 1, blank: blank, breakBefore: brk && j == 0})
		}
	}
	return appendSection(out, section, headings, opt)
}

func appendSection(out []Chunk, units []unit, headings []string, opt Options) []Chunk {
	// Trim blank units at both ends.
	for len(units) > 0 && units[0].blank {
		units = units[1:]
	}
	for len(units) > 0 && units[len(units)-1].blank {
		units = units[:len(units)-1]
	}
	start := 0
	var carry []unit // overlap taken from the end of the previous chunk
	for start < len(units) {
		if len(carry) > 0 && sum(carry)+units[start].tokens > opt.MaxTokens {
			carry = nil
		}
		end, total := start, sum(carry)
		for end < len(units) && (end == start || total+units[end].tokens <= opt.MaxTokens) {
			total += units[end].tokens
			end++
		}
		if end < len(units) {
			// Prefer to end at a paragraph break, if one lies in the
			// second half of the chunk.
			for k := end; k > start; k-- {
				if (units[k].breakBefore || units[k].blank) && sum(units[start:k]) >= opt.MaxTokens/2 {
					end = k
					break
				}
			}
		}
		out = append(out, makeChunk(append(carry, units[start:end]...), headings))
		if end >= len(units) {
			break
		}
		// Overlap: repeat whole units from the end of this chunk, always
		// moving forward; when not even one fits, the tail of the last one.
		last := end
		for last-1 > start && units[last-1].blank {
			last--
		}
		next, over := last, 0
		for next-1 > start && over+units[next-1].tokens <= opt.OverlapTokens {
			next--
			over += units[next].tokens
		}
		carry = nil
		if next == last && opt.OverlapTokens > 0 {
			if tail := tailText(units[last-1].text, opt.OverlapTokens); tail != "" {
				carry = []unit{{line: units[last-1].line, text: tail, tokens: EstimateTokens(tail) + 1}}
			}
			next = end
		}
		for next < len(units) && units[next].blank {
			next++
		}
		start = next
	}
	return out
}

// tailText returns the end of s, at most about tokens long, starting at a
// sentence start when there is one in reach, else at a word.
func tailText(s string, tokens int) string {
	r := []rune(s)
	n, quarter := len(r), 0
	for n > 0 {
		w := 1
		if r[n-1] >= 0x1100 && isWide(r[n-1]) {
			w = 4
		}
		if (quarter+w+3)/4 > tokens {
			break
		}
		quarter += w
		n--
	}
	if n == 0 {
		return s
	}
	tail := string(r[n:])
	if i := strings.Index(tail, ". "); i >= 0 && i < len(tail)/2 {
		return strings.TrimSpace(tail[i+2:])
	}
	if i := strings.IndexByte(tail, ' '); i >= 0 && i < len(tail)/2 {
		return strings.TrimSpace(tail[i+1:])
	}
	return strings.TrimSpace(tail)
}

func sum(us []unit) int {
	t := 0
	for _, u := range us {
		t += u.tokens
	}
	return t
}

func makeChunk(us []unit, headings []string) Chunk {
	for len(us) > 1 && us[len(us)-1].blank {
		us = us[:len(us)-1]
	}
	var b strings.Builder
	for i, u := range us {
		if i > 0 {
			if u.line == us[i-1].line {
				b.WriteByte(' ')
			} else {
				b.WriteByte('\n')
			}
		}
		b.WriteString(u.text)
	}
	return Chunk{
		Heading:   headings[us[0].line],
		StartLine: us[0].line,
		EndLine:   us[len(us)-1].line,
		Text:      b.String(),
	}
}

// cutLine returns l whole when it fits in max tokens, else pieces of up to
// size tokens cut at spaces (or anywhere, for text with no spaces); size
// leaves room for the overlap carried into the next chunk.
func cutLine(l string, max, size int) []string {
	if EstimateTokens(l) <= max {
		return []string{l}
	}
	max = size
	var pieces []string
	for {
		// Walk forward until the piece is full; a walk that reaches the
		// end is the last piece. (Measuring what is left before each walk
		// made a 4 MB line take 6 s: quadratic.)
		cut, tok, fits := 0, 0, true
		for i, r := range l {
			w := 1
			if r >= 0x1100 && isWide(r) {
				w = 4
			}
			if (tok+w+3)/4 > max {
				cut, fits = i, false
				break
			}
			tok += w
		}
		if fits {
			break
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(l)
		}
		if sp := strings.LastIndexByte(l[:cut], ' '); sp > cut/2 {
			cut = sp + 1
		}
		// A piece of white space alone (a run of tabs or form feeds) would
		// be a chunk with nothing to find.
		if piece := strings.TrimRight(l[:cut], " "); strings.TrimSpace(piece) != "" {
			pieces = append(pieces, piece)
		}
		l = l[cut:]
	}
	if strings.TrimSpace(l) != "" {
		pieces = append(pieces, l)
	}
	return pieces
}
