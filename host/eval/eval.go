// Package eval measures conversation retrieval the way users get it: each
// conversation of an eval set is ingested into a fresh home, indexed and
// embedded with the active provider, and each question goes through
// host.ConversationSearch. It is not part of the product API: only the
// CLI's eval command and benchmarks call it.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/sessions"
)

// Request runs the retrieval eval on a data set laid out as in
// shared/bench/README.md: sessions/<conversation>/<session>.jsonl and
// queries.jsonl ({"id", "question", "category", "evidence", "conversation"}).
type Request struct {
	Dir string `json:"dir"`
	K   []int  `json:"k"` // default 5, 10, 25, 50
	// Mixed asks each question a second time once the home also holds
	// the other conversations' turns as daily-log pages (see
	// writeDistractors): a home crowded with other text, as users' are.
	// The figures go in Response.Mixed.
	Mixed bool `json:"mixed,omitempty"`
}

// Response is mean evidence recall@k, overall and by category.
type Response struct {
	Queries    int                           `json:"queries"`
	Mode       string                        `json:"mode"`
	Reason     string                        `json:"reason,omitempty"`
	Model      string                        `json:"model"`
	Recall     map[string]float64            `json:"recall"`
	ByCategory map[string]map[string]float64 `json:"byCategory"`
	// ByConversation is the recall of each conversation's questions: how
	// far the figures spread is a hint of what unseen ones will show.
	ByConversation map[string]map[string]float64 `json:"byConversation"`
	Turns          int                           `json:"turns"` // indexed, over all conversations
	DurationMs     float64                       `json:"durationMs"`
	// KeywordOnly counts questions answered by keyword alone after an
	// earlier one was answered hybrid (the provider failed on the way):
	// figures with any are not those of hybrid search.
	KeywordOnly int `json:"keywordOnly,omitempty"`
	// Mixed holds the same figures in the crowded home (Request.Mixed).
	Mixed *Figures `json:"mixed,omitempty"`
	// Context measures the memory context (Host.Context with the
	// question as its query: every tier, the home's budget, per-tier limit
	// and min score, as a user gets it) beside the conversation search
	// above.
	Context ContextFigures `json:"context"`
}

// ContextFigures are the share of each question's evidence turns that the
// memory context holds, overall and by category, and its mean size.
type ContextFigures struct {
	Budget     int                `json:"budget"`
	PerTier    int                `json:"perTier"`
	Recall     float64            `json:"recall"`
	ByCategory map[string]float64 `json:"byCategory"`
	Turns      float64            `json:"turns"`  // mean transcript turns in it
	Tokens     float64            `json:"tokens"` // mean estimated tokens
}

// Figures are the recall of one kind of home.
type Figures struct {
	Recall         map[string]float64            `json:"recall"`
	ByCategory     map[string]map[string]float64 `json:"byCategory"`
	ByConversation map[string]map[string]float64 `json:"byConversation"`
	// DailyPages is how many daily-log pages of other people's talk each
	// conversation's home held besides its own sessions, summed over the
	// conversations; DailyChunks their indexed chunks, summed likewise.
	DailyPages  int            `json:"dailyPages"`
	DailyChunks int            `json:"dailyChunks"`
	Context     ContextFigures `json:"context"`
}

// tally sums recall@k over questions, overall, by category and by
// conversation.
type tally struct {
	ks    []int
	n     int
	sums  map[int]float64
	cat   map[int]map[int]float64
	catN  map[int]int
	conv  map[string]map[int]float64
	convN map[string]int
	// The memory context's: evidence share, by category, turns, tokens.
	ctxSum, ctxTurns, ctxTokens float64
	ctxCat                      map[int]float64
}

func newTally(ks []int) *tally {
	return &tally{ks: ks, sums: map[int]float64{}, cat: map[int]map[int]float64{}, catN: map[int]int{}, conv: map[string]map[int]float64{}, convN: map[string]int{}, ctxCat: map[int]float64{}}
}

func (t *tally) add(q evalQuery, ranked []string) {
	if t.cat[q.Category] == nil {
		t.cat[q.Category] = map[int]float64{}
	}
	if t.conv[q.Conversation] == nil {
		t.conv[q.Conversation] = map[int]float64{}
	}
	t.n++
	t.catN[q.Category]++
	t.convN[q.Conversation]++
	for _, k := range t.ks {
		rec := evidenceRecall(q.Evidence, ranked, k)
		t.sums[k] += rec
		t.cat[q.Category][k] += rec
		t.conv[q.Conversation][k] += rec
	}
}

// addContext counts one question's memory context: the turns it holds
// and its tokens (add counted the question).
func (t *tally) addContext(q evalQuery, turns []string, tokens int) {
	rec := evidenceRecall(q.Evidence, turns, len(turns))
	t.ctxSum += rec
	t.ctxCat[q.Category] += rec
	t.ctxTurns += float64(len(turns))
	t.ctxTokens += float64(tokens)
}

func (t *tally) figures() Figures {
	f := Figures{Recall: meanRecall(t.ks, t.sums, t.n), ByCategory: map[string]map[string]float64{}, ByConversation: map[string]map[string]float64{}}
	n := float64(max(t.n, 1))
	f.Context = ContextFigures{Recall: round3(t.ctxSum / n), ByCategory: map[string]float64{}, Turns: round3(t.ctxTurns / n), Tokens: round3(t.ctxTokens / n)}
	for c, sum := range t.ctxCat {
		f.Context.ByCategory[strconv.Itoa(c)] = round3(sum / float64(t.catN[c]))
	}
	for c, m := range t.cat {
		f.ByCategory[strconv.Itoa(c)] = meanRecall(t.ks, m, t.catN[c])
	}
	for c, m := range t.conv {
		f.ByConversation[c] = meanRecall(t.ks, m, t.convN[c])
	}
	return f
}

type evalQuery struct {
	ID           string   `json:"id"`
	Question     string   `json:"question"`
	Category     int      `json:"category"`
	Evidence     []string `json:"evidence"`
	Conversation string   `json:"conversation"`
}

// Run ingests each conversation's sessions into a fresh temporary home
// (with this home's provider and models), asks each of its questions
// through ConversationSearch, and measures the fraction of evidence turns
// among the first k turns of the results. A result covering several turns
// uses that many of the k places, so bigger chunks cannot buy recall.
func Run(ctx context.Context, h *host.Host, req Request) (Response, error) {
	start := time.Now()
	ks := req.K
	if len(ks) == 0 {
		ks = []int{5, 10, 25, 50}
	}
	sort.Ints(ks)
	queries, err := readEvalQueries(filepath.Join(req.Dir, "queries.jsonl"))
	if err != nil {
		return Response{}, err
	}
	byConv := map[string][]evalQuery{}
	var convs []string
	for _, q := range queries {
		if _, ok := byConv[q.Conversation]; !ok {
			convs = append(convs, q.Conversation)
		}
		byConv[q.Conversation] = append(byConv[q.Conversation], q)
	}
	resp := Response{}
	clean, mixed := newTally(ks), newTally(ks)
	// The home's own min score: the eval's homes rank everything for
	// recall@k, but the memory context is measured as a user gets it.
	userMinScore := h.Config().Memory.Search.MinScore
	var crowd Figures
	ask := func(sub *host.Host, q evalQuery, t *tally) error {
		r, err := sub.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: q.Question, MaxResults: ks[len(ks)-1]})
		if err != nil {
			return fmt.Errorf("question %s: %w", q.ID, err)
		}
		if resp.Mode == memhost.ModeHybrid && r.Mode != memhost.ModeHybrid {
			resp.KeywordOnly++ // answered while vectors were expected
		} else {
			resp.Mode, resp.Reason = r.Mode, r.Reason
		}
		var ranked []string // turn ids in result order, a place each
		for _, res := range r.Results {
			ranked = append(ranked, res.Turns...)
		}
		t.add(q, ranked)
		c, err := sub.Context(ctx, memhost.ContextRequest{Query: q.Question, MinScore: &userMinScore})
		if err != nil {
			return fmt.Errorf("question %s, memory context: %w", q.ID, err)
		}
		var turns []string
		for _, it := range c.Items {
			turns = append(turns, it.Turns...)
		}
		t.addContext(q, turns, c.Tokens)
		return nil
	}
	for _, conv := range convs {
		src := filepath.Join(req.Dir, "sessions", conv)
		sub, home, cleanup, turns, err := evalHome(ctx, h, src)
		if err != nil {
			return resp, fmt.Errorf("conversation %s: %w", conv, err)
		}
		resp.Turns += turns
		for _, q := range byConv[conv] {
			if err := ask(sub, q, clean); err != nil {
				cleanup()
				return resp, err
			}
			resp.Queries++
		}
		if resp.Model == "" {
			if st, err := sub.Status(ctx, memhost.StatusRequest{}); err == nil && st.Model != "" {
				resp.Model = st.Provider + "/" + st.Model
			}
		}
		if req.Mixed {
			var others []string
			for _, c := range convs {
				if c != conv {
					others = append(others, filepath.Join(req.Dir, "sessions", c))
				}
			}
			pages, chunks, err := crowdHome(ctx, sub, home, others)
			if err != nil {
				cleanup()
				return resp, fmt.Errorf("conversation %s, mixed home: %w", conv, err)
			}
			crowd.DailyPages += pages
			crowd.DailyChunks += chunks
			for _, q := range byConv[conv] {
				if err := ask(sub, q, mixed); err != nil {
					cleanup()
					return resp, err
				}
			}
		}
		cleanup()
	}
	if resp.Model == "" {
		resp.Model = "none (keyword only)"
	}
	f := clean.figures()
	resp.Recall, resp.ByCategory, resp.ByConversation, resp.Context = f.Recall, f.ByCategory, f.ByConversation, f.Context
	cfg := h.Config().Memory.Context
	resp.Context.Budget, resp.Context.PerTier = cfg.Budget, cfg.PerTier
	if req.Mixed {
		m := mixed.figures()
		m.DailyPages, m.DailyChunks = crowd.DailyPages, crowd.DailyChunks
		m.Context.Budget, m.Context.PerTier = resp.Context.Budget, resp.Context.PerTier
		resp.Mixed = &m
	}
	resp.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	return resp, nil
}

// meanRecall is each k's sum over n questions, keyed by k, to three places.
func meanRecall(ks []int, sums map[int]float64, n int) map[string]float64 {
	out := make(map[string]float64, len(ks))
	for _, k := range ks {
		out[strconv.Itoa(k)] = round3(sums[k] / float64(max(n, 1)))
	}
	return out
}

func round3(x float64) float64 { return float64(int(x*1000+0.5)) / 1000 }

// evidenceRecall is the share of evidence among the first k ranked turns.
func evidenceRecall(evidence, ranked []string, k int) float64 {
	if len(evidence) == 0 {
		return 0
	}
	top := map[string]bool{}
	for i, id := range ranked {
		if i == k {
			break
		}
		top[id] = true
	}
	found := 0
	for _, e := range evidence {
		if top[e] {
			found++
		}
	}
	return float64(found) / float64(len(evidence))
}

// evalQueryTimeoutMs is how long a question waits for its vector.
const evalQueryTimeoutMs = 120_000

// evalHome makes a temporary home holding one conversation's sessions
// (the .jsonl files of src), indexed and embedded, with h's provider
// settings and models; cleanup closes it and removes it.
func evalHome(ctx context.Context, h *host.Host, src string) (sub *host.Host, home string, cleanup func(), turns int, err error) {
	copySessions := func(home string) error {
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(src, e.Name()))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(home, "sessions", e.Name()), b, 0o600); err != nil {
				return err
			}
		}
		return nil
	}
	return newEvalHome(ctx, h, copySessions, nil)
}

// newEvalHome makes a temporary home whose sessions/ folder write fills
// (write may also lay other folders, such as cache/), derived from h with
// the eval's settings and then edit's (nil: none), indexed and embedded;
// cleanup closes it and removes it.
func newEvalHome(ctx context.Context, h *host.Host, write func(home string) error, edit func(*config.Config)) (sub *host.Host, home string, cleanup func(), turns int, err error) {
	home, err = os.MkdirTemp("", "memhost-eval-")
	if err != nil {
		return nil, "", nil, 0, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(home)
		}
	}()
	if err := os.MkdirAll(filepath.Join(home, "sessions"), 0o700); err != nil {
		return nil, "", nil, 0, err
	}
	if err := write(home); err != nil {
		return nil, "", nil, 0, err
	}
	sub, err = h.Derive(ctx, home, func(cfg *config.Config) {
		cfg.Memory.NotebookDir = filepath.Join(home, "notebook")
		cfg.Memory.Database = filepath.Join(home, "brain", "memory.db")
		cfg.Memory.Search.MinScore = 0          // rank everything: recall@k judges the order
		cfg.Memory.Embedding.RecallBudgetMs = 0 // embedded below, once
		// A question's vector is waited for: on a busy machine the query
		// embedding may take longer than a recall's 5 s, and the question
		// would be answered by keyword alone. The eval measures the order.
		cfg.Memory.Embedding.QueryTimeoutMs = evalQueryTimeoutMs
		if edit != nil {
			edit(cfg)
		}
	})
	if err != nil {
		return nil, "", nil, 0, err
	}
	cleanup = func() { sub.Close(); os.RemoveAll(home) }
	res, err := sub.Sync(ctx, memhost.SyncRequest{})
	if err == nil {
		err = embedAll(ctx, sub)
	}
	if err != nil {
		sub.Close()
		return nil, "", nil, 0, err
	}
	return sub, home, cleanup, res.Chunks, nil
}

func readEvalQueries(path string) ([]evalQuery, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval set: %w", err)
	}
	defer f.Close()
	var out []evalQuery
	err = sessions.ReadLines(f, 1, func(n int, line []byte) error {
		var q evalQuery
		if err := json.Unmarshal(line, &q); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if q.Question != "" && q.Conversation != "" && len(q.Evidence) > 0 {
			out = append(out, q) // questions without evidence are not scored
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no questions with evidence", path)
	}
	return out, nil
}

// crowdHome writes the turns of the conversations in others (folders of
// session files) into home's notebook as daily-log pages, indexes and
// embeds them, and returns how many pages and chunks it added. Each
// session becomes a "## HH:MM" entry of the page of its first turn's day,
// one line a turn, "Speaker: words": a person's log of other people's
// talk. Sessions of one day share the page, as entries of one day do.
func crowdHome(ctx context.Context, sub *host.Host, home string, others []string) (pages, chunks int, err error) {
	byDay := map[string][]string{} // day → entries
	var days []string
	for _, dir := range others {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return 0, 0, err
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			day, entry, err := dailyEntry(filepath.Join(dir, e.Name()))
			if err != nil {
				return 0, 0, err
			}
			if entry == "" {
				continue
			}
			if _, ok := byDay[day]; !ok {
				days = append(days, day)
			}
			byDay[day] = append(byDay[day], entry)
		}
	}
	dir := filepath.Join(home, "notebook", "daily")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, 0, err
	}
	for _, day := range days {
		page := "# Daily Log — " + day + "\n\n" + strings.Join(byDay[day], "\n")
		if err := os.WriteFile(filepath.Join(dir, day+".md"), []byte(page), 0o600); err != nil {
			return 0, 0, err
		}
	}
	res, err := sub.Sync(ctx, memhost.SyncRequest{})
	if err != nil {
		return 0, 0, err
	}
	if err := embedAll(ctx, sub); err != nil {
		return 0, 0, err
	}
	return len(days), res.Chunks, nil
}

// embedAttempts is how often embedAll runs the queue before giving up:
// below memory.embedding's deadAfterFailures (5), so no chunk is given up
// for dead by the eval.
const embedAttempts = 4

// embedAll embeds every chunk of sub's index. No provider at all leaves
// the eval keyword-only (its figures say so); a provider that failed on
// the way (on a busy machine the plugin may be restarted, and is then
// loading its model) is waited for and the queue run again, so that the
// figures never depend on how many vectors were made in time.
func embedAll(ctx context.Context, sub *host.Host) error {
	for attempt := 1; ; attempt++ {
		_, err := sub.Embed(ctx, memhost.EmbedRequest{})
		if errors.Is(err, host.ErrProviderNotReady) {
			return nil // keyword-only: the eval says so
		}
		if err == nil {
			st, serr := sub.Status(ctx, memhost.StatusRequest{})
			if serr != nil || st.Mode != memhost.ModeHybrid || st.Pending+st.Dead == 0 {
				return serr
			}
			err = fmt.Errorf("%d chunks still without a vector", st.Pending+st.Dead)
		}
		if attempt == embedAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 5 * time.Second):
		}
	}
}

// dailyEntry is one session file as a daily-log entry, and the day of its
// first dated turn ("2000-01-01" when none is dated).
func dailyEntry(path string) (day, entry string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	day, hm := "2000-01-01", "00:00"
	dated := false
	var speakers, lines []string
	err = sessions.ReadLines(f, 1, func(n int, line []byte) error {
		var t memhost.Turn
		if err := json.Unmarshal(line, &t); err != nil {
			return fmt.Errorf("%s:%d: %v", path, n, err)
		}
		text := strings.Join(strings.Fields(t.Content), " ")
		if text == "" {
			return nil
		}
		if !dated && len(t.Timestamp) >= 16 {
			day, hm, dated = t.Timestamp[:10], t.Timestamp[11:16], true
		}
		who := t.Speaker
		if who == "" {
			who = t.Role
		}
		if !slices.Contains(speakers, who) {
			speakers = append(speakers, who)
		}
		lines = append(lines, who+": "+text)
		return nil
	})
	if err != nil || len(lines) == 0 {
		return "", "", err
	}
	return day, "## " + hm + " — talk between " + strings.Join(speakers, " and ") + "\n\n" + strings.Join(lines, "\n") + "\n", nil
}
