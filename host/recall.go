package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/sdk"
)

// Search modes.
const (
	ModeKeyword = "keyword"
	ModeHybrid  = "hybrid"
)

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
	Reason  string        `json:"reason"` // why the mode is keyword; "" when hybrid
	Results RecallResults `json:"results"`
	Timing  Timing        `json:"timing"`
}

// RecallResults are the groups, notebook first; sessions only when asked
// for (--sources sessions).
type RecallResults struct {
	Notebook []Result `json:"notebook"`
	Daily    []Result `json:"daily"`
	Sessions []Result `json:"sessions,omitempty"`
}

// Result is one chunk found.
type Result struct {
	Path    string  `json:"path"` // relative to the notebook
	Heading string  `json:"heading"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"` // 0..1
	Lines   Lines   `json:"lines"`
	// For transcript hits.
	Session string   `json:"session,omitempty"`
	Turns   []string `json:"turns,omitempty"`
	Context string   `json:"context,omitempty"` // the end of the turn before: what this turn answers
}

// Timing says where a recall spent its time, in milliseconds.
type Timing struct {
	SyncMs   float64 `json:"syncMs"`
	FtsMs    float64 `json:"ftsMs"`
	VectorMs float64 `json:"vectorMs"` // readiness check, query embedding, KNN and fusion
	TotalMs  float64 `json:"totalMs"`
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
	resp := RecallResponse{Query: req.Query, Mode: ModeKeyword}
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
		if _, err := h.Sync(ctx); err != nil {
			return resp, fmt.Errorf("sync before search: %w", err)
		}
	}
	resp.Timing.SyncMs = ms(time.Since(start))

	sources := req.Sources
	if len(sources) == 0 {
		sources = []string{SourceNotebook, SourceDaily}
	}
	ranked, err := h.rank(ctx, searchQuery{text: req.Query, sources: sources, n: max(50, 4*limit)}, &resp.Mode, &resp.Reason, &resp.Timing)
	if err != nil {
		return resp, err
	}

	terms := index.Terms(req.Query)
	n := 0
	for _, r := range ranked {
		if r.score < minScore || n == limit {
			break
		}
		n++
		res := Result{
			Path:    r.hit.Path,
			Heading: r.hit.Heading,
			Snippet: Snippet(r.hit.Text, terms, 200),
			Score:   r.score,
			Lines:   Lines{r.hit.StartLine, r.hit.EndLine},
		}
		switch r.hit.Source {
		case SourceSessions:
			res.Heading, res.Session, res.Turns = turnHeading(r.hit.Meta)
			res.Context = Snippet(r.hit.Context, terms, 160)
			resp.Results.Sessions = append(resp.Results.Sessions, res)
		case SourceDaily:
			resp.Results.Daily = append(resp.Results.Daily, res)
		default:
			resp.Results.Notebook = append(resp.Results.Notebook, res)
		}
	}
	resp.Timing.TotalMs = ms(time.Since(start))
	return resp, nil
}

// searchQuery is one search: text, groups, optionally one file, and how
// many candidates each of BM25 and KNN contributes.
type searchQuery struct {
	text    string
	sources []string
	path    string
	n       int
}

// rank runs BM25 and, when a provider is ready, the vector search, and
// returns the fused ranking, best first; mode, reason and timing are set.
func (h *Host) rank(ctx context.Context, q searchQuery, mode, why *string, timing *Timing) ([]scored, error) {
	ftsStart := time.Now()
	hits, err := h.idx.Search(ctx, index.Query{Text: q.text, Sources: q.sources, Path: q.path, Limit: q.n})
	timing.FtsMs = ms(time.Since(ftsStart))
	if errors.Is(err, index.ErrNoTerms) {
		return nil, fmt.Errorf("%w: the query %q has no searchable words", ErrBadInput, q.text)
	}
	if err != nil {
		return nil, err
	}
	ranked := make([]scored, len(hits))
	for i, hit := range hits {
		ranked[i] = scored{hit, relativeScore(hit.BM25, hits[0].BM25)}
	}
	vecStart := time.Now()
	*mode = ModeKeyword
	if fused, err := h.hybridRank(ctx, q, hits); err != nil {
		*why = reason(err)
	} else {
		ranked, *mode, *why = fused, ModeHybrid, ""
	}
	timing.VectorMs = ms(time.Since(vecStart))
	return ranked, nil
}

// turnHeading describes a transcript hit: "Caroline, 2023-05-08T13:56".
func turnHeading(meta string) (heading, session string, turns []string) {
	var m turnMeta
	json.Unmarshal([]byte(meta), &m)
	who := m.Speaker
	if who == "" {
		who = m.Role
	}
	heading = who
	if m.Timestamp != "" {
		heading += ", " + m.Timestamp
	}
	return heading, m.Session, m.Turns
}

// scored is a hit with its 0..1 score, best first in a ranking.
type scored struct {
	hit   index.Hit
	score float64
}

// hybridRank runs the vector search and fuses it with the BM25 hits
// (memory.search.fusion). Any error means keyword results stand, and its
// text is the reason.
func (h *Host) hybridRank(ctx context.Context, q searchQuery, bm25 []index.Hit) ([]scored, error) {
	sem, err := h.hybrid(ctx)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(h.cfg.Memory.Embedding.QueryTimeoutMs) * time.Millisecond
	qv, err := sem.provider.EmbedWithin(ctx, []string{q.text}, sdk.KindQuery, timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProviderNotReady, err)
	}
	vhits, err := h.idx.SearchVectors(ctx, qv[0], q.n, q.sources, q.path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProviderNotReady, err)
	}
	search := h.cfg.Memory.Search
	// Vector hits under the similarity floor are no candidates: a query
	// related to nothing brings no neighbours.
	for i, hit := range vhits {
		if 1-hit.Distance < search.MinSimilarity {
			vhits = vhits[:i] // nearest first: the rest are further still
			break
		}
	}
	if search.Fusion == config.FusionRRF {
		return rrfRank(search, bm25, vhits), nil
	}
	// The vector side of keyword hits the neighbour search did not reach.
	sims := make(map[int64]float64, len(bm25)+len(vhits))
	for _, hit := range vhits {
		sims[hit.ChunkID] = 1 - hit.Distance
	}
	var missing []int64
	for _, hit := range bm25 {
		if _, ok := sims[hit.ChunkID]; !ok {
			missing = append(missing, hit.ChunkID)
		}
	}
	more, err := h.idx.Similarities(ctx, qv[0], missing)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProviderNotReady, err)
	}
	for id, sim := range more {
		sims[id] = sim
	}
	return linearRank(search.VectorWeight, bm25, vhits, sims), nil
}

// linearRank fuses by a weighted mean of the two scores, each scaled so
// the best candidate has 1: BM25 over the best BM25 (0 for a hit found by
// vectors alone) and cosine similarity over the highest one. Unlike rank
// fusion it keeps how far apart the scores are: a turn far ahead on one
// side is not pulled level with one barely ahead. On the LoCoMo dev split
// it beats Reciprocal Rank Fusion by 5-10 points of R@5 (docs/benchmarks.md).
func linearRank(weight float64, bm25, vhits []index.Hit, sims map[int64]float64) []scored {
	best := 0.0
	for _, s := range sims {
		best = max(best, s)
	}
	out := make([]scored, 0, len(bm25)+len(vhits))
	seen := make(map[int64]bool, len(bm25)+len(vhits))
	add := func(hit index.Hit, kw float64) {
		seen[hit.ChunkID] = true
		vec := 0.0
		if best > 0 {
			vec = max(0, sims[hit.ChunkID]) / best
		}
		out = append(out, scored{hit, (kw + weight*vec) / (1 + weight)})
	}
	for _, hit := range bm25 {
		add(hit, bm25Ratio(hit.BM25, bm25[0].BM25))
	}
	for _, hit := range vhits {
		if !seen[hit.ChunkID] {
			add(hit, 0)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	for i := range out {
		out[i].score = math.Round(out[i].score*1000) / 1000
	}
	return out
}

// rrfRank fuses by weighted Reciprocal Rank Fusion (memory.search.fusionK,
// vectorWeight): only the order of each list counts.
func rrfRank(search config.Search, bm25, vhits []index.Hit) []scored {
	byID := make(map[int64]index.Hit, len(bm25)+len(vhits))
	kw := make([]int64, len(bm25))
	for i, hit := range bm25 {
		kw[i] = hit.ChunkID
		byID[hit.ChunkID] = hit
	}
	vec := make([]int64, len(vhits))
	for i, hit := range vhits {
		vec[i] = hit.ChunkID
		if _, ok := byID[hit.ChunkID]; !ok {
			byID[hit.ChunkID] = hit
		}
	}
	fused := index.FuseWeighted(search.FusionK, []float64{1, search.VectorWeight}, kw, vec)
	out := make([]scored, len(fused))
	for i, f := range fused {
		out[i] = scored{byID[f.ID], math.Round(f.Score*1000) / 1000}
	}
	return out
}

// relativeScore maps a BM25 value (negative, lower is better) to 0..1: the
// square root of its ratio to the best one, rounded to three places. The
// root keeps a page that matches one of two query words in sight (BM25
// ratios fall off fast), while minScore 0.25 still drops pages scoring
// under 1/16 of the best.
func relativeScore(bm25, best float64) float64 {
	return math.Round(math.Sqrt(bm25Ratio(bm25, best))*1000) / 1000
}

// bm25Ratio is a BM25 value (negative, lower is better) over the best
// one: 1 for the best, towards 0 for the worst.
func bm25Ratio(bm25, best float64) float64 {
	if best >= 0 || bm25 >= 0 {
		return 1 // FTS5 clamps IDF for words in over half the rows: all tie
	}
	return bm25 / best
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
