package host

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memhost/memhost"
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

// Recall searches the notebook. Unless memory.sync.syncOnSearch is off, it
// first indexes pages edited since the last sync, so results are never
// stale.
//
// Scores: in keyword mode a result's score comes from its BM25 relative to
// the best result's (the best scores 1), so minScore drops results that
// match far fewer or far commoner query words than the best one. Results
// are capped at maxResults in total, then grouped; no group is boosted
// over another.
func (h *Host) Recall(ctx context.Context, req memhost.RecallRequest) (memhost.RecallResponse, error) {
	start := time.Now()
	cfg := h.config()
	resp := memhost.RecallResponse{Query: req.Query, Mode: ModeKeyword}
	resp.Results = memhost.RecallResults{Notebook: []memhost.Result{}, Daily: []memhost.Result{}}
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
		res := memhost.Result{
			Path:    r.Hit.Path,
			Heading: r.Hit.Heading,
			Snippet: search.Snippet(r.Hit.Text, terms, 200),
			Score:   r.Score,
			Lines:   memhost.Lines{Start: r.Hit.StartLine, End: r.Hit.EndLine},
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
func (h *Host) rank(ctx context.Context, q search.Query, mode, why *string, timing *memhost.Timing) ([]search.Scored, error) {
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

// ConversationSearch searches the transcripts, hybrid when a provider is
// ready and keyword-only otherwise, like Recall.
func (h *Host) ConversationSearch(ctx context.Context, req memhost.ConversationSearchRequest) (memhost.ConversationSearchResponse, error) {
	start := time.Now()
	resp := memhost.ConversationSearchResponse{Query: req.Query, Mode: ModeKeyword, Results: []memhost.TurnResult{}}
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
		resp.Results = append(resp.Results, memhost.TurnResult{Session: m.Session, Turns: m.Turns, Role: m.Role, Speaker: m.Speaker,
			Timestamp: m.Timestamp, Snippet: search.Snippet(r.Hit.Text, terms, 200), Context: search.Snippet(r.Hit.Context, terms, 160),
			Score: r.Score, Lines: memhost.Lines{Start: r.Hit.StartLine, End: r.Hit.EndLine}})
	}
	resp.Timing.TotalMs = ms(time.Since(start))
	return resp, nil
}

// recallScope checks a recall's filters and returns them as the index's
// scope: tags normalised (no '#', lowercase), the path relative to the
// notebook without "./" or a trailing "/".
func recallScope(req memhost.RecallRequest) (index.Scope, error) {
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
