// Package recall runs memhost's searches: recall over the notebook, the
// daily logs and the transcripts, and conversation-search over the
// transcripts alone, keyword or hybrid.
package recall

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/embedq"
	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/host/search"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/host/timewindow"
	"github.com/memhost/memhost/index"
	"github.com/memhost/memhost/index/ftstext"
	"github.com/memhost/memhost/index/vaultrows"
	"github.com/memhost/memhost/index/vectors"
	"github.com/memhost/memhost/internal/origin"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/sdk"
)

// Recall searches the notebook. Unless memory.sync.syncOnSearch is off, it
// first indexes pages edited since the last sync, so results are never
// stale.
//
// Scores: in keyword mode a result's score comes from its BM25 relative to
// the best result's (the best scores 1), so minScore drops results that
// match far fewer or far commoner query words than the best one. Results
// are capped at maxResults in total, then grouped; no group is boosted
// over another. A recall of the transcripts leaves out the episode logs
// (memory.episodes.folder), which repeat them.
func (s *RecallService) Recall(ctx context.Context, req memhost.RecallRequest) (memhost.RecallResponse, error) {
	start := time.Now()
	cfg := s.k.Config()
	resp := memhost.RecallResponse{Query: req.Query, Mode: memhost.ModeKeyword}
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
		if !slices.Contains(index.Sources, s) {
			return resp, fault.BadInputf("sources", "unknown source %q (choose from %s)", s, strings.Join(index.Sources, ", "))
		}
	}
	scope, err := recallScope(req)
	if err != nil {
		return resp, err
	}
	if err := s.k.WithIndex(ctx, func() error { return s.k.SyncBeforeSearch(ctx) }); err != nil {
		return resp, err
	}
	resp.Timing.SyncMs = ms(time.Since(start))

	sources := req.Sources
	if len(sources) == 0 {
		sources = []string{indexer.SourceNotebook, indexer.SourceDaily}
	}
	var ranked []search.Scored
	err = s.k.WithIndex(ctx, func() (err error) {
		qv := s.queryVector(req.Query)
		defer qv.release()
		ranked, err = s.rank(ctx, search.Query{Text: req.Query, Sources: sources, Scope: scope, N: max(50, 4*limit)}, qv, &resp.Mode, &resp.Reason, &resp.Timing)
		return err
	})
	if err != nil {
		return resp, err
	}
	if slices.Contains(sources, indexer.SourceNotebook) {
		err := s.k.WithIndex(ctx, func() (err error) {
			resp.Results.Facts, err = s.k.SearchFacts(ctx, req.Query, min(limit, MaxRecallFacts), minScore)
			return err
		})
		if err != nil {
			return resp, err
		}
	}
	terms := ftstext.Terms(req.Query)
	// With the transcripts searched, the episode logs (pages generated
	// from them) would find each turn a second time: the turn answers.
	episodes := ""
	if slices.Contains(sources, sessions.Source) {
		episodes = cfg.Memory.Episodes.Folder + "/"
	}
	n := 0
	for _, r := range ranked {
		if r.Score < minScore || n == limit {
			break
		}
		if episodes != "" && r.Hit.Source == indexer.SourceNotebook && strings.HasPrefix(r.Hit.Path, episodes) {
			continue
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
		case sessions.Source:
			m := sessions.ParseMeta(r.Hit.Meta)
			res.Heading, res.Session, res.Turns = m.Heading(), m.Session, m.Turns
			res.Context = search.Snippet(r.Hit.Context, terms, 160)
			resp.Results.Sessions = append(resp.Results.Sessions, res)
		case indexer.SourceDaily:
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

// rank runs BM25 and, when a provider is ready, the vector search with
// the query's vector (qv: the query of q, embedded once for the searches
// that share it), and returns the fused ranking, best first; mode, reason
// and timing are set.
func (s *RecallService) rank(ctx context.Context, q search.Query, qv *queryVector, mode, why *string, timing *memhost.Timing) ([]search.Scored, error) {
	// The vector half (the query's embedding and the nearest-neighbour
	// search) needs nothing from the keyword half, so it runs beside it,
	// on another core where there is one; only the fusion needs both. A
	// query with no searchable word is refused by the keyword half before
	// anything is embedded.
	var near nearest
	var wg sync.WaitGroup
	vctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if ftstext.MatchExpr(q.Text) != "" {
		wg.Go(func() { near = s.nearest(vctx, q, qv) })
	}
	ftsStart := time.Now()
	bm25, ranked, err := search.Keyword(ctx, s.k.Index(), q)
	timing.FtsMs += ms(time.Since(ftsStart))
	if err != nil {
		cancel() // the recall fails: the vector half stops at once
	}
	wg.Wait()
	if err != nil {
		return nil, err
	}
	fuseStart := time.Now()
	*mode = memhost.ModeKeyword
	if near.err == nil {
		if fused, err := search.Combine(ctx, s.k.Vectors(), s.k.Config().Memory.Search, near.v, bm25, near.hits); err != nil {
			near.err = &embedq.NotReadyError{Reason: err.Error()}
		} else {
			ranked, *mode, *why = fused, memhost.ModeHybrid, ""
		}
	}
	if near.err != nil {
		*why = embedq.Reason(near.err)
	}
	timing.VectorMs += ms(near.took + time.Since(fuseStart))
	if len(q.Sources) == 1 && q.Sources[0] == sessions.Source {
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

// nearest is the vector half of a search: the query's vector and its
// nearest chunks, or why there are none (then keyword results stand), and
// how long it took.
type nearest struct {
	v    []float32
	hits []index.Hit
	err  error
	took time.Duration
}

func (s *RecallService) nearest(ctx context.Context, q search.Query, qv *queryVector) (n nearest) {
	start := time.Now()
	defer func() { n.took = time.Since(start) }()
	if n.v, n.err = qv.get(ctx); n.err != nil {
		return n
	}
	if n.hits, n.err = search.Nearest(ctx, s.k.Vectors(), s.k.Config().Memory.Search, q, n.v); n.err != nil {
		n.err = &embedq.NotReadyError{Reason: n.err.Error()}
	}
	return n
}

// queryVector is a query embedded once for every search that uses it,
// with the provider held (so the index's vectors stay those of its model)
// until release.
type queryVector struct {
	s    *RecallService
	text string
	done bool
	v    []float32
	sem  *embedq.Semantic
	err  error
}

func (s *RecallService) queryVector(text string) *queryVector { return &queryVector{s: s, text: text} }

// get embeds the query the first time, and returns that vector or why
// there is none every time.
func (qv *queryVector) get(ctx context.Context) ([]float32, error) {
	if qv.done {
		return qv.v, qv.err
	}
	qv.done = true
	qv.sem, qv.err = qv.s.k.Queue().ForSearch(ctx)
	if qv.err != nil {
		return nil, qv.err
	}
	timeout := time.Duration(qv.s.k.Config().Memory.Embedding.QueryTimeoutMs) * time.Millisecond
	v, err := qv.sem.Provider.EmbedWithin(ctx, []string{qv.text}, sdk.KindQuery, timeout)
	if err != nil {
		qv.err = &embedq.NotReadyError{Reason: err.Error()}
		return nil, qv.err
	}
	qv.v = v[0]
	return qv.v, nil
}

// release lets the provider go.
func (qv *queryVector) release() {
	if qv.sem != nil {
		qv.sem.Release()
		qv.sem = nil
	}
}

// ConversationSearch searches the transcripts, hybrid when a provider is
// ready and keyword-only otherwise, like Recall. Time words in the query
// ("last Saturday", "in March") name a window, resolved against
// req.AsOf (now when empty) in the home's zone: its turns are lifted by
// search.WindowWeight, and the response says which window it read.
func (s *RecallService) ConversationSearch(ctx context.Context, req memhost.ConversationSearchRequest) (memhost.ConversationSearchResponse, error) {
	start := time.Now()
	resp := memhost.ConversationSearchResponse{Query: req.Query, Mode: memhost.ModeKeyword, Results: []memhost.TurnResult{}}
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
		ok, err := s.k.Sessions().Exists(req.Session)
		if err != nil {
			return resp, err
		}
		if !ok {
			return resp, fault.Errorf(fault.NotFound, "session", "unknown session %q (no %s)", req.Session, sessions.Path(req.Session))
		}
		path = sessions.Path(req.Session)
	}
	since, err := sessions.ParseWhen(req.Since, false, s.k.Location())
	if err != nil {
		return resp, fault.BadInputf("since", "since %q: %v", req.Since, err)
	}
	until, err := sessions.ParseWhen(req.Until, true, s.k.Location())
	if err != nil {
		return resp, fault.BadInputf("until", "until %q: %v", req.Until, err)
	}
	if err := origin.Check(req.Channel, req.SourceID); err != nil {
		return resp, err
	}
	asOf := s.k.Now()
	if req.AsOf != "" {
		if asOf, err = sessions.ParseWhen(req.AsOf, false, s.k.Location()); err != nil {
			return resp, fault.BadInputf("asOf", "as of %q: %v", req.AsOf, err)
		}
	}
	window, windowed := timewindow.Find(req.Query, asOf.In(s.k.Location()))
	if windowed {
		resp.Window = &memhost.TimeWindow{Since: window.Since.Format(time.RFC3339), Until: window.Until.Format(time.RFC3339), Phrase: window.Phrase}
	}
	if err := s.k.WithIndex(ctx, func() error { return s.k.SyncBeforeSearch(ctx) }); err != nil {
		return resp, err
	}
	resp.Timing.SyncMs = ms(time.Since(start))
	n := max(50, 4*limit)
	if !since.IsZero() || !until.IsZero() || req.Channel != "" || windowed {
		// Dates and channels filter after ranking; a window lifts turns
		// the words alone may have ranked low.
		n = max(200, 20*limit)
	}
	var ranked []search.Scored
	err = s.k.WithIndex(ctx, func() (err error) {
		qv := s.queryVector(req.Query)
		defer qv.release()
		ranked, err = s.rank(ctx, search.Query{Text: req.Query, Sources: []string{sessions.Source}, Path: path, N: n}, qv, &resp.Mode, &resp.Reason, &resp.Timing)
		return err
	})
	if err != nil {
		return resp, err
	}
	if windowed {
		ranked = search.ByWindow(ranked, func(h index.Hit) bool {
			t, ok := sessions.TurnTime(sessions.ParseMeta(h.Meta).Timestamp, s.k.Location())
			return ok && window.Contains(t)
		}, search.WindowWeight)
	}
	terms := ftstext.Terms(req.Query)
	minScore := s.k.Config().Memory.Search.MinScore
	for _, r := range ranked {
		if r.Score < minScore || len(resp.Results) == limit {
			break
		}
		m := sessions.ParseMeta(r.Hit.Meta)
		if req.Channel != "" && !strings.EqualFold(m.Channel, req.Channel) || req.SourceID != "" && m.SourceID != req.SourceID {
			continue
		}
		if !since.IsZero() || !until.IsZero() {
			t, ok := sessions.TurnTime(m.Timestamp, s.k.Location())
			if !ok || (!since.IsZero() && t.Before(since)) || (!until.IsZero() && t.After(until)) {
				continue
			}
		}
		resp.Results = append(resp.Results, memhost.TurnResult{Session: m.Session, Turns: m.Turns, Role: m.Role, Speaker: m.Speaker,
			Timestamp: m.Timestamp, Channel: m.Channel, SourceID: m.SourceID, Snippet: search.Snippet(r.Hit.Text, terms, 200), Context: search.Snippet(r.Hit.Context, terms, 160),
			Score: r.Score, Lines: memhost.Lines{Start: r.Hit.StartLine, End: r.Hit.EndLine}})
	}
	resp.Timing.TotalMs = ms(time.Since(start))
	return resp, nil
}

// recallScope checks a recall's filters and returns them as the index's
// scope: tags normalised (no '#', lowercase), the path relative to the
// notebook without "./" or a trailing "/".
func recallScope(req memhost.RecallRequest) (vaultrows.Scope, error) {
	var sc vaultrows.Scope
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

// Kernel is what recall uses of the host.
type Kernel interface {
	Config() *config.Config
	Index() *index.DB
	Vectors() *vectors.DB
	Queue() *embedq.Queue
	Sessions() *sessions.Store
	Notebook() *notebook.Notebook
	Location() *time.Location
	Now() time.Time
	WithIndex(ctx context.Context, fn func() error) error
	SyncBeforeSearch(ctx context.Context) error
	SearchFacts(ctx context.Context, query string, limit int, minScore float64) ([]knowledge.FactRow, error)
}

// RecallService runs the searches: recall and conversation-search.
type RecallService struct{ k Kernel }

// New returns the service over k.
func New(k Kernel) *RecallService { return &RecallService{k: k} }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
