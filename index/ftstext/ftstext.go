// Package ftstext is the text FTS5 sees: pages and chunks segmented for
// the unicode61 tokenizer (CJK runs as bigrams), and a user's query as a
// MATCH expression of its terms (stop words dropped). No SQL.
package ftstext

import (
	"errors"
	"strings"
	"unicode"
)

// ErrNoTerms means a query held no searchable word (MatchExpr returned "").
var ErrNoTerms = errors.New("query has no searchable words")

// FTS5's unicode61 tokenizer treats a run of Chinese, Japanese or Korean
// characters with no spaces as one token, so a query for a word inside a
// sentence finds nothing. We index such runs as overlapping bigrams plus the
// run's last character ("ABCD" -> "AB BC CD D"), the approach of Lucene's
// CJKAnalyzer: a query of two or more characters becomes a phrase of bigrams,
// a one-character query a prefix query that matches every bigram starting
// with it and the trailing unigram.

// isCJK reports whether r belongs to a script written without spaces
// between words (Han, Hiragana, Katakana) or Hangul, whose words carry
// attached particles.
func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) ||
		unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) ||
		unicode.Is(unicode.Hangul, r) ||
		r == 'ー' // prolonged sound mark, category Lm, inside katakana words
}

// Segment returns text with every CJK run replaced by its bigrams, ready for
// the FTS5 table. Other text passes through unchanged for unicode61 and porter.
func Segment(text string) string {
	if !hasCJK(text) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) * 3)
	var run []rune
	flush := func() {
		if len(run) == 0 {
			return
		}
		b.WriteByte(' ')
		for i := 0; i+1 < len(run); i++ {
			b.WriteString(string(run[i : i+2]))
			b.WriteByte(' ')
		}
		b.WriteRune(run[len(run)-1])
		b.WriteByte(' ')
		run = run[:0]
	}
	for _, r := range text {
		if isCJK(r) {
			run = append(run, r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

func hasCJK(s string) bool {
	for _, r := range s {
		if r >= 0x1100 && isCJK(r) {
			return true
		}
	}
	return false
}

// MatchExpr turns a free-text query into an FTS5 MATCH expression: every
// word quoted (so no user input is read as FTS5 syntax) and OR-ed, which lets
// BM25 rank pages that hold more of the words, and rarer ones, first. It
// returns "" when the query holds no searchable word.
func MatchExpr(query string) string {
	var terms []string
	ws := Terms(query)
	for _, w := range ws {
		runes := []rune(w)
		if !isCJK(runes[0]) {
			// A lone Latin letter ("Sarah's" gives "s") matches nearly
			// every page; keep it only when it is all there is.
			if len(runes) == 1 && len(ws) > 1 && runes[0] < 0x80 && unicode.IsLetter(runes[0]) {
				continue
			}
			terms = append(terms, quote(w))
			continue
		}
		if len(runes) == 1 {
			terms = append(terms, quote(w)+"*")
			continue
		}
		grams := make([]string, 0, len(runes)-1)
		for i := 0; i+1 < len(runes); i++ {
			grams = append(grams, string(runes[i:i+2]))
		}
		terms = append(terms, quote(strings.Join(grams, " ")))
	}
	return strings.Join(terms, " OR ")
}

// words splits a query into letter/digit words, and splits CJK runs from
// the rest so that each can be matched its own way. Words are lowercased and
// repeated words dropped.
func words(query string) []string {
	var out []string
	seen := map[string]bool{}
	var cur []rune
	curCJK := false
	emit := func() {
		if len(cur) == 0 {
			return
		}
		w := strings.ToLower(string(cur))
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
		cur = cur[:0]
	}
	for _, r := range query {
		switch {
		case isCJK(r):
			if !curCJK {
				emit()
			}
			curCJK = true
			cur = append(cur, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			if curCJK {
				emit()
			}
			curCJK = false
			cur = append(cur, r)
		default:
			emit()
		}
	}
	emit()
	return out
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Terms returns the words of a query that a search matches: lowercased,
// without repeats, and without English stop words ("what", "is", "the")
// unless the query holds nothing else. Stop words match most pages, so
// they add cost and noise, never a better ranking.
func Terms(query string) []string {
	all := words(query)
	var kept []string
	for _, w := range all {
		if !stopwords[w] {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		return all
	}
	return kept
}

var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does
		for from had has have he her hers him his how i if in into is it its me my of on or
		our she so than that the their them then there these they this those to was we were
		what when where which who whom why will with would you your`) {
		m[w] = true
	}
	return m
}()
