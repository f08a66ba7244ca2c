package host

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/search"
	"github.com/memhost/memhost/host/sessions"
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
	Sources    []string `json:"sources,omitempty"`    // empty: notebook and daily
	// Filters, applied inside both the keyword and the vector search:
	// pages having every tag in Tags (frontmatter tags and inline #tags;
	// "project" also matches "project/alpha"), and pages under Path (a
	// folder such as "knowledge/", or one page).
	Tags []string `json:"tags,omitempty"`
	Path string   `json:"path,omitempty"`
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
// for.
type RecallResults struct {
	// Facts are the current facts matching the query (at most
	// MaxRecallFacts, shown first), when the notebook is searched and any
	// match; see FactAdd.
	Facts    []index.FactRow `json:"facts,omitempty"`
	Notebook []Result        `json:"notebook"`
	Daily    []Result        `json:"daily"`
	Sessions []Result        `json:"sessions,omitempty"`
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

// Timing says where a search spent its time, in milliseconds.
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
// the best result's (the best scores 1), so minScore drops results that
// match far fewer or far commoner query words than the best one. Results
// are capped at maxResults in total, then grouped; no group is boosted
// over another.
func (h *Host) Recall(ctx context.Context, req RecallRequest) (RecallResponse, error) {
	start := time.Now()
	cfg := h.config()
	resp := RecallResponse{Query: req.Query, Mode: ModeKeyword}
	resp.Results = RecallResults{Notebook: []Result{}, Daily: []Result{}}
	if strings.TrimSpace(req.Query) == "" {
		return resp, fault.BadInputf("query", "the query is empty")
	}
	limit := req.MaxResults
	if limit == 0 {
		limit = cfg.Memory.Search.MaxResults
	}
	if limit < 1 {
		return resp, fault.BadInputf("maxResults", "max results must be at least 1, got %d", limit)
	}
	minScore := cfg.Memory.Search.MinScore
	if req.MinScore != nil {
		minScore = *req.MinScore
	}
	if minScore < 0 || minScore > 1 {
		return resp, fault.BadInputf("minScore", "min score must be between 0 and 1, got %g", minScore)
	}
	for _, s := range req.Sources {
		if !slices.Contains(Sources, s) {
			return resp, fault.BadInputf("sources", "unknown source %q (choose from %s)", s, strings.Join(Sources, ", "))
		}
	}
	scope, err := recallScope(req)
	if err != nil {
		return resp, err
	}
	if err := h.withIndex(ctx, func() error { return h.syncBeforeSearch(ctx) }); err != nil {
		return resp, err
	}
	resp.Timing.SyncMs = ms(time.Since(start))

	sources := req.Sources
	if len(sources) == 0 {
		sources = []string{SourceNotebook, SourceDaily}
	}
	var ranked []search.Scored
	err = h.withIndex(ctx, func() (err error) {
		ranked, err = h.rank(ctx, search.Query{Text: req.Query, Sources: sources, Scope: scope, N: max(50, 4*limit)}, &resp.Mode, &resp.Reason, &resp.Timing)
		return err
	})
	if err != nil {
		return resp, err
	}
	if slices.Contains(sources, SourceNotebook) {
		err := h.withIndex(ctx, func() (err error) {
			resp.Results.Facts, err = h.SearchFacts(ctx, req.Query, min(limit, MaxRecallFacts), minScore)
			return err
		})
		if err != nil {
			return resp, err
		}
	}
	terms := index.Terms(req.Query)
	n := 0
	for _, r := range ranked {
		if r.Score < minScore || n == limit {
			break
		}
		n++
		res := Result{
			Path:    r.Hit.Path,
			Heading: r.Hit.Heading,
			Snippet: search.Snippet(r.Hit.Text, terms, 200),
			Score:   r.Score,
			Lines:   Lines{r.Hit.StartLine, r.Hit.EndLine},
		}
		switch r.Hit.Source {
		case SourceSessions:
			m := sessions.ParseMeta(r.Hit.Meta)
			res.Heading, res.Session, res.Turns = m.Heading(), m.Session, m.Turns
			res.Context = search.Snippet(r.Hit.Context, terms, 160)
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

// MaxRecallFacts is the most facts recall's FACTS group holds.
const MaxRecallFacts = 5

// syncBeforeSearch indexes what changed on disk since the last sync,
// unless memory.sync.syncOnSearch is off. While Watch runs (memhost
// serve), that is only the pages its events named; else one stat per page.
func (h *Host) syncBeforeSearch(ctx context.Context) error {
	if !h.config().Memory.Sync.SyncOnSearch {
		return nil
	}
	res, err := h.indexer.Fresh(ctx)
	if err != nil {
		return fault.Errorf(fault.KindOf(err), "", "sync before search: %w", err)
	}
	if res.Indexed > 0 {
		h.queue.Kick() // the worker, when one runs, embeds the new chunks
	}
	return nil
}

// rank runs BM25 and, when a provider is ready, the vector search, and
// returns the fused ranking, best first; mode, reason and timing are set.
func (h *Host) rank(ctx context.Context, q search.Query, mode, why *string, timing *Timing) ([]search.Scored, error) {
	ftsStart := time.Now()
	bm25, ranked, err := search.Keyword(ctx, h.idx, q)
	timing.FtsMs = ms(time.Since(ftsStart))
	if err != nil {
		return nil, err
	}
	vecStart := time.Now()
	*mode = ModeKeyword
	if fused, err := h.hybridRank(ctx, q, bm25); err != nil {
		*why = embedq.Reason(err)
	} else {
		ranked, *mode, *why = fused, ModeHybrid, ""
	}
	timing.VectorMs = ms(time.Since(vecStart))
	if len(q.Sources) == 1 && q.Sources[0] == SourceSessions {
		// A search of the transcripts alone (conversation-search, recall
		// --sources sessions): a turn counts with its session's best, and
		// a speaker the query names is lifted.
		ranked = search.BySession(ranked, search.SessionWeight)
		ranked = search.BySpeaker(ranked, q.Text, hitSpeaker, search.SpeakerWeight)
	}
	return ranked, nil
}

// hitSpeaker is who said a transcript hit ("" when the turn names no one).
func hitSpeaker(h index.Hit) string { return sessions.MetaSpeaker(h.Meta) }

// hybridRank embeds the query and fuses the vector search with the BM25
// hits. Any error means keyword results stand, and says why.
func (h *Host) hybridRank(ctx context.Context, q search.Query, bm25 []index.Hit) ([]search.Scored, error) {
	sem, err := h.queue.ForSearch(ctx)
	if err != nil {
		return nil, err
	}
	defer sem.Release()
	cfg := h.config()
	timeout := time.Duration(cfg.Memory.Embedding.QueryTimeoutMs) * time.Millisecond
	qv, err := sem.Provider.EmbedWithin(ctx, []string{q.Text}, sdk.KindQuery, timeout)
	if err != nil {
		return nil, &embedq.NotReadyError{Reason: err.Error()}
	}
	fused, err := search.Hybrid(ctx, h.idx, cfg.Memory.Search, q, qv[0], bm25)
	if err != nil {
		return nil, &embedq.NotReadyError{Reason: err.Error()}
	}
	return fused, nil
}

// ConversationSearchRequest searches transcripts.
type ConversationSearchRequest struct {
	Query      string `json:"query"`
	Session    string `json:"session,omitempty"`    // only this session
	Since      string `json:"since,omitempty"`      // YYYY-MM-DD or RFC 3339: turns at or after
	Until      string `json:"until,omitempty"`      // YYYY-MM-DD (whole day) or RFC 3339: turns at or before
	MaxResults int    `json:"maxResults,omitempty"` // default 10
}

// TurnResult is a transcript chunk found: its session, turn ids, who spoke
// and when.
type TurnResult struct {
	Session   string   `json:"session"`
	Turns     []string `json:"turns"`
	Role      string   `json:"role,omitempty"`
	Speaker   string   `json:"speaker,omitempty"`
	Timestamp string   `json:"timestamp,omitempty"`
	Snippet   string   `json:"snippet"`
	// Context is the end of the turn before (what this turn answers, when
	// it is a reply), around the query's words; "" for a first turn.
	Context string  `json:"context,omitempty"`
	Score   float64 `json:"score"`
	Lines   Lines   `json:"lines"` // lines of the transcript file
}

// ConversationSearchResponse holds results best first.
type ConversationSearchResponse struct {
	Query   string       `json:"query"`
	Mode    string       `json:"mode"`
	Reason  string       `json:"reason"`
	Results []TurnResult `json:"results"`
	Timing  Timing       `json:"timing"`
}

// ConversationSearch searches the transcripts, hybrid when a provider is
// ready and keyword-only otherwise, like Recall.
func (h *Host) ConversationSearch(ctx context.Context, req ConversationSearchRequest) (ConversationSearchResponse, error) {
	start := time.Now()
	resp := ConversationSearchResponse{Query: req.Query, Mode: ModeKeyword, Results: []TurnResult{}}
	if strings.TrimSpace(req.Query) == "" {
		return resp, fault.BadInputf("query", "the query is empty")
	}
	limit := req.MaxResults
	if limit == 0 {
		limit = 10
	}
	if limit < 1 {
		return resp, fault.BadInputf("maxResults", "max results must be at least 1, got %d", limit)
	}
	path := ""
	if req.Session != "" {
		ok, err := h.sessions.Exists(req.Session)
		if err != nil {
			return resp, err
		}
		if !ok {
			return resp, fault.Errorf(fault.NotFound, "session", "unknown session %q (no %s)", req.Session, sessions.Path(req.Session))
		}
		path = sessions.Path(req.Session)
	}
	since, err := sessions.ParseWhen(req.Since, false, h.loc())
	if err != nil {
		return resp, fault.BadInputf("since", "since %q: %v", req.Since, err)
	}
	until, err := sessions.ParseWhen(req.Until, true, h.loc())
	if err != nil {
		return resp, fault.BadInputf("until", "until %q: %v", req.Until, err)
	}
	if err := h.withIndex(ctx, func() error { return h.syncBeforeSearch(ctx) }); err != nil {
		return resp, err
	}
	resp.Timing.SyncMs = ms(time.Since(start))
	n := max(50, 4*limit)
	if !since.IsZero() || !until.IsZero() {
		n = max(200, 20*limit) // dates filter after ranking
	}
	var ranked []search.Scored
	err = h.withIndex(ctx, func() (err error) {
		ranked, err = h.rank(ctx, search.Query{Text: req.Query, Sources: []string{SourceSessions}, Path: path, N: n}, &resp.Mode, &resp.Reason, &resp.Timing)
		return err
	})
	if err != nil {
		return resp, err
	}
	terms := index.Terms(req.Query)
	minScore := h.config().Memory.Search.MinScore
	for _, r := range ranked {
		if r.Score < minScore || len(resp.Results) == limit {
			break
		}
		m := sessions.ParseMeta(r.Hit.Meta)
		if !since.IsZero() || !until.IsZero() {
			t, ok := sessions.TurnTime(m.Timestamp, h.loc())
			if !ok || (!since.IsZero() && t.Before(since)) || (!until.IsZero() && t.After(until)) {
				continue
			}
		}
		resp.Results = append(resp.Results, TurnResult{Session: m.Session, Turns: m.Turns, Role: m.Role, Speaker: m.Speaker,
			Timestamp: m.Timestamp, Snippet: search.Snippet(r.Hit.Text, terms, 200), Context: search.Snippet(r.Hit.Context, terms, 160),
			Score: r.Score, Lines: Lines{r.Hit.StartLine, r.Hit.EndLine}})
	}
	resp.Timing.TotalMs = ms(time.Since(start))
	return resp, nil
}

// recallScope checks a recall's filters and returns them as the index's
// scope: tags normalised (no '#', lowercase), the path relative to the
// notebook without "./" or a trailing "/".
func recallScope(req RecallRequest) (index.Scope, error) {
	var sc index.Scope
	for _, t := range req.Tags {
		n := markdown.NormalizeTag(t)
		if n == "" || strings.ContainsAny(n, " \t\n#") {
			return sc, fault.BadInputf("tags", "tag %q: a tag is a word such as project or project/alpha", t)
		}
		sc.Tags = append(sc.Tags, n)
	}
	if p := strings.TrimSpace(req.Path); p != "" {
		clean := path.Clean(filepath.ToSlash(p))
		if strings.HasPrefix(clean, "/") || clean == ".." || strings.HasPrefix(clean, "../") {
			return sc, fault.Errorf(fault.Outside, "path", "path %q is outside the notebook", req.Path)
		}
		if clean != "." {
			sc.Prefix = clean
		}
	}
	return sc, nil
}
