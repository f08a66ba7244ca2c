// Package benchdata generates the notebooks memhost's benchmarks run on,
// once per machine (in the temporary folder, reused across runs: the
// generation is deterministic).
//
//   - Synthetic: pages of a title and ten H2 sections of three 13-22 word
//     sentences drawn from a Zipf-distributed vocabulary of 20,000 made-up
//     words: 11 chunks a page (10k pages, ~110k chunks).
//   - WordNet: the same layout filled with English: WordNet 3.0's glosses
//     (Debian's wordnet-base), a section per synset group. English has
//     longer posting lists for common words than the synthetic language,
//     which is what makes FTS slower on it.
package benchdata

import (
	"bufio"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Vocab is the synthetic vocabulary's size.
const Vocab = 20000

// Words draws words of the synthetic language.
type Words struct {
	Words []string // by frequency rank
	zipf  *rand.Zipf
}

// NewWords returns the synthetic language of seed (the benchmarks use 1).
func NewWords(seed int64) *Words {
	r := rand.New(rand.NewSource(seed))
	syll := []string{"ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "ve", "da", "ri", "gu", "zo", "fe", "ba", "ni", "to", "su", "me", "la"}
	seen := map[string]bool{}
	var words []string
	for len(words) < Vocab {
		n := 2 + r.Intn(3)
		var b strings.Builder
		for range n {
			b.WriteString(syll[r.Intn(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return &Words{Words: words, zipf: rand.NewZipf(r, 1.07, 2, Vocab-1)}
}

// Word is one word, Zipf-distributed.
func (s *Words) Word() string { return s.Words[s.zipf.Uint64()] }

// Rank is the rank of the next word drawn (0 is the commonest).
func (s *Words) Rank() uint64 { return s.zipf.Uint64() }

// Sentence is n words.
func (s *Words) Sentence(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = s.Word()
	}
	return strings.Join(ws, " ")
}

// Queries are n queries of 1-3 content words: recall drops English stop
// words, so the synthetic language's 100 commonest words (each in most
// chunks) play that part and are left out.
func (s *Words) Queries(n int, seed int64) []string {
	r := rand.New(rand.NewSource(seed))
	out := make([]string, n)
	for i := range out {
		var cw []string
		for k := 1 + r.Intn(3); len(cw) < k; {
			if rank := s.zipf.Uint64(); rank >= 100 {
				cw = append(cw, s.Words[rank])
			}
		}
		out[i] = strings.Join(cw, " ")
	}
	return out
}

// Synthetic returns the folder of a synthetic notebook of n pages.
func Synthetic(n int) (string, error) {
	ws := NewWords(1)
	r := rand.New(rand.NewSource(2))
	return generate(fmt.Sprintf("memhost-bench-v1-%d", n), n, func(i int) string {
		var p strings.Builder
		fmt.Fprintf(&p, "# Page %d %s\n\n", i, ws.Word())
		for s := range 10 {
			fmt.Fprintf(&p, "## %s %s %d\n", ws.Word(), ws.Word(), s)
			for range 3 {
				fmt.Fprintf(&p, "- %s.\n", ws.Sentence(13+r.Intn(10)))
			}
			p.WriteString("\n")
		}
		return p.String()
	})
}

// WordNetDir is where Debian's wordnet-base puts the database.
const WordNetDir = "/usr/share/wordnet"

// ErrNoWordNet means wordnet-base is not installed.
var ErrNoWordNet = errors.New("WordNet is not installed (apt-get install wordnet-base)")

// WordNet returns the folder of an English notebook of n pages made of
// WordNet's glosses: each page a title word and ten sections, each section
// headed by a synset's first word and holding three glosses.
func WordNet(n int) (string, error) {
	glosses, err := readGlosses()
	if err != nil {
		return "", err
	}
	r := rand.New(rand.NewSource(4))
	return generate(fmt.Sprintf("memhost-bench-wordnet-v1-%d", n), n, func(i int) string {
		var p strings.Builder
		g := glosses[r.Intn(len(glosses))]
		fmt.Fprintf(&p, "# %s\n\n", g.word)
		for range 10 {
			g := glosses[r.Intn(len(glosses))]
			fmt.Fprintf(&p, "## %s\n", g.word)
			for range 3 {
				fmt.Fprintf(&p, "- %s.\n", glosses[r.Intn(len(glosses))].gloss)
			}
			p.WriteString("\n")
		}
		return p.String()
	})
}

// EnglishQueries are everyday queries over WordNet's glosses.
var EnglishQueries = []string{
	"small domesticated animal", "musical instrument with strings", "a disease of the lungs",
	"someone who writes books", "a large body of water", "device for measuring time",
	"the act of running fast", "a sweet dessert", "having great strength", "ancient Greek philosopher",
	"a unit of money", "the capital city", "tool for cutting wood", "feeling of great happiness",
	"a person who teaches", "the colour of the sky", "a heavy rain storm", "soldier in the army",
	"building where people worship", "plant with yellow flowers",
}

type gloss struct{ word, gloss string }

func readGlosses() ([]gloss, error) {
	var out []gloss
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		f, err := os.Open(filepath.Join(WordNetDir, "data."+pos))
		if errors.Is(err, os.ErrNotExist) {
			return nil, ErrNoWordNet
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "  ") { // the licence header
				continue
			}
			head, g, ok := strings.Cut(line, " | ")
			fields := strings.Fields(head)
			if !ok || len(fields) < 5 {
				continue
			}
			out = append(out, gloss{strings.ReplaceAll(fields[4], "_", " "), strings.TrimSpace(g)})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// generate writes n pages made by page into a folder of the temporary
// folder named name, once: a folder already complete is reused.
func generate(name string, n int, page func(i int) string) (string, error) {
	dir := filepath.Join(os.TempDir(), name)
	marker := filepath.Join(dir, ".complete")
	if _, err := os.Stat(marker); err == nil {
		return dir, nil
	}
	os.RemoveAll(dir)
	for i := range n {
		folder := []string{"knowledge", "lists", "reference", "daily", "projects"}[i%5]
		path := filepath.Join(dir, folder, fmt.Sprintf("%03d", i/1000), fmt.Sprintf("page-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(page(i)), 0o644); err != nil {
			return "", err
		}
	}
	// Age the pages past the racy window, as pages edited earlier are.
	old := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	return dir, os.WriteFile(marker, nil, 0o644)
}
