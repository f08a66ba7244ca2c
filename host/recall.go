package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memhost/memhost/index"
)

// Search modes.
const (
	ModeKeyword = "keyword"
	ModeHybrid  = "hybrid"
)

// reasonNoProvider explains keyword-only search until embeddings providers
// exist.
const reasonNoProvider = "no embeddings provider configured: search is keyword-only (BM25)"

// RecallRequest is a search of the notebook.
type RecallRequest struct {
	Query      string   `json:"query"`
	MaxResults int      `json:"maxResults,omitempty"` // 0: memory.search.maxResults
	MinScore   *float64 `json:"minScore,omitempty"`   // nil: memory.search.minScore
	Sources    []string `json:"sources,omitempty"`    // empty: all (notebook, daily)
}

// RecallResponse holds results grouped by source, best first in each group.
type RecallResponse struct {
	Query   string        `json:"query"`
	Mode    string        `json:"mode"`
	Reason  string        `json:"reason,omitempty"`
	Results RecallResults `json:"results"`
	Timing  Timing        `json:"timing"`
	Sync    *SyncResult   `json:"-"` // what the stale check indexed first
}

// RecallResults are the groups, notebook first.
type RecallResults struct {
	Notebook []Result `json:"notebook"`
	Daily    []Result `json:"daily"`
}

// Result is one chunk found.
type Result struct {
	Path    string  `json:"path"` // relative to the notebook
	Heading string  `json:"heading"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"` // 0..1
	Lines   Lines   `json:"lines"`
}

// Timing says where a recall spent its time, in milliseconds.
type Timing struct {
	SyncMs  float64 `json:"syncMs"`
	FtsMs   float64 `json:"ftsMs"`
	TotalMs float64 `json:"totalMs"`
}

// Recall searches the notebook. Unless memory.sync.syncOnSearch is off, it
// first indexes pages edited since the last sync, so results are never
// stale.
//
// Scores: in keyword mode a result's score comes from its BM25 relative to
// the best result's (the best scores 1; see relativeScore), so minScore
// drops results that match far fewer or far commoner query words than the
// best one. Results are capped at
// maxResults in total, then grouped; no group is boosted over another.
func (h *Host) Recall(ctx context.Context, req RecallRequest) (RecallResponse, error) {
	start := time.Now()
	resp := RecallResponse{Query: req.Query, Mode: ModeKeyword, Reason: reasonNoProvider}
	resp.Results = RecallResults{Notebook: []Result{}, Daily: []Result{}}
	if strings.TrimSpace(req.Query) == "" {
		return resp, fmt.Errorf("%w: the query is empty", ErrBadInput)
	}
	limit := req.MaxResults
	if limit == 0 {
		limit = h.cfg.Memory.Search.MaxResults
	}
	if limit < 1 {
		return resp, fmt.Errorf("%w: max results must be at least 1, got %d", ErrBadInput, limit)
	}
	minScore := h.cfg.Memory.Search.MinScore
	if req.MinScore != nil {
		minScore = *req.MinScore
	}
	if minScore < 0 || minScore > 1 {
		return resp, fmt.Errorf("%w: min score must be between 0 and 1, got %g", ErrBadInput, minScore)
	}
	for _, s := range req.Sources {
		if !slices.Contains(Sources, s) {
			return resp, fmt.Errorf("%w: unknown source %q (choose from %s)", ErrBadInput, s, strings.Join(Sources, ", "))
		}
	}

	if h.cfg.Memory.Sync.SyncOnSearch {
		sr, err := h.Sync(ctx)
		if err != nil {
			return resp, fmt.Errorf("sync before search: %w", err)
		}
		resp.Sync = &sr
	}
	resp.Timing.SyncMs = ms(time.Since(start))

	ftsStart := time.Now()
	hits, err := h.idx.Search(ctx, index.Query{Text: req.Query, Sources: req.Sources, Limit: max(50, 4*limit)})
	resp.Timing.FtsMs = ms(time.Since(ftsStart))
	if errors.Is(err, index.ErrNoTerms) {
		return resp, fmt.Errorf("%w: the query %q has no searchable words", ErrBadInput, req.Query)
	}
	if err != nil {
		return resp, err
	}
	terms := index.Terms(req.Query)
	n := 0
	for _, hit := range hits {
		score := relativeScore(hit.BM25, hits[0].BM25)
		if score < minScore || n == limit {
			break
		}
		n++
		r := Result{
			Path:    hit.Path,
			Heading: hit.Heading,
			Snippet: Snippet(hit.Text, terms, 200),
			Score:   score,
			Lines:   Lines{hit.StartLine, hit.EndLine},
		}
		if hit.Source == SourceDaily {
			resp.Results.Daily = append(resp.Results.Daily, r)
		} else {
			resp.Results.Notebook = append(resp.Results.Notebook, r)
		}
	}
	resp.Timing.TotalMs = ms(time.Since(start))
	return resp, nil
}

// relativeScore maps a BM25 value (negative, lower is better) to 0..1: the
// square root of its ratio to the best one, rounded to three places. The
// root keeps a page that matches one of two query words in sight (BM25
// ratios fall off fast), while minScore 0.25 still drops pages scoring
// under 1/16 of the best.
func relativeScore(bm25, best float64) float64 {
	if best >= 0 || bm25 >= 0 {
		return 1 // FTS5 clamps IDF for words in over half the rows: all tie
	}
	return math.Round(math.Sqrt(bm25/best)*1000) / 1000
}

// Snippet returns about n characters of text around the first place a query
// term appears (the start of the text when none does), on one line, with
// "…" where it was cut.
func Snippet(text string, terms []string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	lower := strings.ToLower(text)
	at := -1
	for _, t := range terms {
		// Match a stem-like prefix so "meetings" finds "meeting".
		if r := []rune(t); len(r) > 5 {
			t = string(r[:max(5, len(r)-3)])
		}
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	runes := []rune(text)
	start := 0
	if at > 0 {
		start = max(0, utf8.RuneCountInString(text[:min(at, len(text))])-n/4)
		// Start at a word boundary.
		for start > 0 && start < len(runes) && !unicode.IsSpace(runes[start-1]) {
			start--
		}
	}
	end := min(len(runes), start+n)
	if end == len(runes) {
		start = max(0, end-n)
	}
	out := strings.TrimSpace(string(runes[start:end]))
	if start > 0 {
		out = "…" + out
	}
	if end < len(runes) {
		out += "…"
	}
	return out
}
