package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/chunk"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/index/embcache"
)

// Layouts an eval set comes in (Detect).
const (
	// LayoutDir is a folder of sessions/<conversation>/<session>.jsonl and
	// queries.jsonl (Run).
	LayoutDir = "dir"
	// LayoutLongMemEval is a LongMemEval file as published
	// (longmemeval_s_cleaned.json, longmemeval_oracle.json,
	// longmemeval_m.json): a JSON array of questions, each with its own
	// haystack of sessions (RunLongMemEval).
	LayoutLongMemEval = "longmemeval"
)

// Detect says which layout path holds, by its shape: a folder with
// queries.jsonl, or a file whose first character is '['. Anything else
// is an error naming path.
func Detect(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("eval set: %w", err)
	}
	if fi.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "queries.jsonl")); err != nil {
			return "", fmt.Errorf("%s: a folder without queries.jsonl: not an eval set (want queries.jsonl and sessions/, or a LongMemEval JSON file)", path)
		}
		return LayoutDir, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("eval set: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		c, _, err := r.ReadRune()
		if err != nil {
			return "", fmt.Errorf("%s: empty: not an eval set (want a LongMemEval JSON array of questions, or a folder with queries.jsonl)", path)
		}
		switch {
		case c == '[':
			return LayoutLongMemEval, nil
		case c == '\ufeff' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		default:
			return "", fmt.Errorf("%s: starts with %q: not an eval set (want a LongMemEval JSON array of questions, or a folder with queries.jsonl)", path, c)
		}
	}
}

// LongMemEvalRequest runs the retrieval eval on a LongMemEval file. Each
// question's haystack is searched alone, in a home of its own; abstention
// questions (ids ending in "_abs") have no answer session to find and
// are skipped.
type LongMemEvalRequest struct {
	Path string `json:"path"`
	// Types keeps the questions of these types (question_type); empty:
	// every type.
	Types []string `json:"types,omitempty"`
	// Sample, when above 0, asks that many questions drawn at random
	// (after Types), the same ones for the same Seed; they are asked in
	// the file's order.
	Sample int    `json:"sample,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	// CacheDir is the embedding cache every question's home shares, so
	// that a session repeated across questions is embedded once; it is
	// kept, so a second run embeds nothing it embedded before. "": a
	// temporary folder, removed after the run.
	CacheDir string `json:"cacheDir,omitempty"`
	// Progress, when set, is called before the first question (Done 0)
	// and after each one.
	Progress func(Progress) `json:"-"`
}

// Progress is how far a LongMemEval run is.
type Progress struct {
	Done, Total int
	Elapsed     time.Duration
	Left        time.Duration // estimated from the questions done; 0 before the first
	// Hybrid says a provider is configured: the haystacks are embedded.
	// Tokens is then the estimated tokens of the distinct sessions of the
	// questions asked (chunk.EstimateTokens), counted before the first.
	Hybrid bool
	Tokens int
}

// LongMemEvalResponse is the figures of a LongMemEval run: overall, by
// question type, and the search's time.
type LongMemEvalResponse struct {
	Path       string `json:"path"`
	Questions  int    `json:"questions"`  // scored
	Abstention int    `json:"abstention"` // skipped: no answer session to find
	Mode       string `json:"mode"`
	Reason     string `json:"reason,omitempty"`
	Model      string `json:"model"`
	// KeywordOnly counts questions answered by keyword alone after an
	// earlier one was answered hybrid (see Response.KeywordOnly).
	KeywordOnly int                   `json:"keywordOnly,omitempty"`
	K           []int                 `json:"k"`
	Overall     LMEFigures            `json:"overall"`
	ByType      map[string]LMEFigures `json:"byType"`
	// SearchMs is the median and 95th percentile of the searches' time
	// (each question's ConversationSearch call), in milliseconds.
	SearchMs Percentiles `json:"searchMs"`
	Sessions int         `json:"sessions"` // indexed, over all homes
	Turns    int         `json:"turns"`    // chunks indexed, over all homes
	// Windows counts the questions whose words named a time window
	// (ConversationSearchResponse.Window) against the question's date.
	Windows int `json:"windows"`
	// CacheHits and CacheMisses count the chunk vectors found in the
	// shared embedding cache and those the provider had to make.
	CacheHits   int64   `json:"cacheHits"`
	CacheMisses int64   `json:"cacheMisses"`
	DurationMs  float64 `json:"durationMs"`
}

// Percentiles of a set of times.
type Percentiles struct {
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
}

// LMEFigures are the means, over a set of questions, of the session- and
// turn-level measures at each k (keyed "1", "3", ...).
type LMEFigures struct {
	Questions int `json:"questions"`
	// RecallAny: an answer session among the first k sessions
	// (sessionRanking); RecallAll: every answer session there; NDCG: the
	// normalised discounted cumulative gain of the first k sessions,
	// answer sessions relevant (1) and others not (0).
	RecallAny map[string]float64 `json:"recallAny"`
	RecallAll map[string]float64 `json:"recallAll"`
	NDCG      map[string]float64 `json:"ndcg"`
	// TurnAny: an evidence turn (has_answer) among the first k turns of
	// the results; TurnShare: the share of the evidence turns there. A
	// result covering several turns takes that many of the k places.
	TurnAny   map[string]float64 `json:"turnAny"`
	TurnShare map[string]float64 `json:"turnShare"`
}

// LMEKs are the cut-offs of a LongMemEval run, in sessions and in turns.
var LMEKs = []int{1, 3, 5, 10}

// lmeResults is how many turns each question asks for: the session
// ranking is read from them, and 100 turns of a ~500-turn haystack hold
// more than the 10 distinct sessions of the largest k on LongMemEval-S's
// dev questions (a question whose results held fewer would count the
// missing ranks as not found).
const lmeResults = 100

// lmeQuestion is one question as published. The list fields are lists;
// some copies of the data hold them as strings of a JSON list, which
// jsonList reads too.
type lmeQuestion struct {
	ID                 string                      `json:"question_id"`
	Type               string                      `json:"question_type"`
	Question           string                      `json:"question"`
	Date               string                      `json:"question_date"`
	AnswerSessionIDs   jsonList[string]            `json:"answer_session_ids"`
	HaystackDates      jsonList[string]            `json:"haystack_dates"`
	HaystackSessionIDs jsonList[string]            `json:"haystack_session_ids"`
	HaystackSessions   jsonList[jsonList[lmeTurn]] `json:"haystack_sessions"`
}

type lmeTurn struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	HasAnswer bool   `json:"has_answer"`
}

// jsonList is a JSON list, or a JSON string holding one.
type jsonList[T any] []T

func (l *jsonList[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		b = []byte(s)
		if err := json.Unmarshal(b, (*[]T)(l)); err != nil {
			return fmt.Errorf("a string that does not hold a JSON list: %.40q", s)
		}
		return nil
	}
	return json.Unmarshal(b, (*[]T)(l))
}

// lmeDateLayout is LongMemEval's date: "2023/05/30 (Tue) 10:18".
const lmeDateLayout = "2006/01/02 (Mon) 15:04"

// check reports what makes q unusable, in words naming the field.
func (q *lmeQuestion) check() error {
	switch {
	case q.ID == "":
		return errors.New("no question_id")
	case strings.TrimSpace(q.Question) == "":
		return errors.New("empty question")
	case len(q.HaystackSessions) != len(q.HaystackSessionIDs):
		return fmt.Errorf("%d haystack_sessions for %d haystack_session_ids", len(q.HaystackSessions), len(q.HaystackSessionIDs))
	case len(q.HaystackDates) != len(q.HaystackSessionIDs):
		return fmt.Errorf("%d haystack_dates for %d haystack_session_ids", len(q.HaystackDates), len(q.HaystackSessionIDs))
	}
	if _, err := time.Parse(lmeDateLayout, q.Date); err != nil {
		return fmt.Errorf("question_date %q: want a date such as 2023/05/30 (Tue) 10:18", q.Date)
	}
	for i, d := range q.HaystackDates {
		if _, err := time.Parse(lmeDateLayout, d); err != nil {
			return fmt.Errorf("haystack_dates[%d] %q: want a date such as 2023/05/30 (Tue) 10:18", i, d)
		}
	}
	if !q.abstention() && len(q.AnswerSessionIDs) == 0 {
		return errors.New("no answer_session_ids")
	}
	return nil
}

// abstention questions ask about what the history never says.
func (q *lmeQuestion) abstention() bool { return strings.HasSuffix(q.ID, "_abs") }

// readLongMemEval streams the questions of path to fn, one at a time (a
// LongMemEval-M file is gigabytes): the n-th question (0-based) and its
// fields. An error names the file and the question.
func readLongMemEval(path string, fn func(n int, q *lmeQuestion) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("eval set: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return fmt.Errorf("%s: not a JSON array of questions", path)
	}
	for n := 0; dec.More(); n++ {
		var q lmeQuestion
		if err := dec.Decode(&q); err != nil {
			return fmt.Errorf("%s: question %d: %v", path, n+1, err)
		}
		if err := q.check(); err != nil {
			return fmt.Errorf("%s: question %d (%s): %v", path, n+1, q.ID, err)
		}
		if err := fn(n, &q); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// RunLongMemEval asks each chosen question of a LongMemEval file through
// ConversationSearch in a fresh home holding its haystack alone (with this
// home's provider and models), the question's date as the search's
// reference time, and measures where its answer sessions and evidence
// turns come. Every home shares one embedding cache, keyed by chunk text
// and model, so a session in many haystacks is embedded once.
func RunLongMemEval(ctx context.Context, h *host.Host, req LongMemEvalRequest) (LongMemEvalResponse, error) {
	start := time.Now()
	resp := LongMemEvalResponse{Path: req.Path, K: LMEKs, ByType: map[string]LMEFigures{}}
	if req.Sample < 0 {
		return resp, fmt.Errorf("sample %d: want a count of questions, 0 for all", req.Sample)
	}
	// First pass: which questions, and the tokens of their distinct
	// sessions.
	type meta struct {
		n      int
		tokens map[string]int
	}
	var chosen []meta
	types := map[string]bool{}
	err := readLongMemEval(req.Path, func(n int, q *lmeQuestion) error {
		types[q.Type] = true
		if len(req.Types) > 0 && !slices.Contains(req.Types, q.Type) {
			return nil
		}
		if q.abstention() {
			resp.Abstention++
			return nil
		}
		m := meta{n: n, tokens: map[string]int{}}
		for i, s := range q.HaystackSessions {
			if _, ok := m.tokens[q.HaystackSessionIDs[i]]; ok {
				continue
			}
			t := 0
			for _, turn := range s {
				t += chunk.EstimateTokens(turn.Content)
			}
			m.tokens[q.HaystackSessionIDs[i]] = t
		}
		chosen = append(chosen, m)
		return nil
	})
	if err != nil {
		return resp, err
	}
	for _, t := range req.Types {
		if !types[t] {
			return resp, fmt.Errorf("%s: no question of type %q (types: %s)", req.Path, t, strings.Join(slices.Sorted(maps.Keys(types)), ", "))
		}
	}
	if req.Sample > 0 && req.Sample < len(chosen) {
		r := rand.New(rand.NewPCG(req.Seed, 0))
		r.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
		chosen = chosen[:req.Sample]
		sort.Slice(chosen, func(i, j int) bool { return chosen[i].n < chosen[j].n })
	}
	if len(chosen) == 0 {
		return resp, fmt.Errorf("%s: no question to ask (%d abstention questions skipped)", req.Path, resp.Abstention)
	}
	tokens := map[string]int{}
	for _, m := range chosen {
		for id, t := range m.tokens {
			tokens[id] = t
		}
	}
	hybrid := false
	if st, err := h.Status(ctx, memhost.StatusRequest{}); err == nil {
		hybrid = st.Provider != ""
	}
	progress := func(done int) {
		if req.Progress == nil {
			return
		}
		p := Progress{Done: done, Total: len(chosen), Elapsed: time.Since(start), Hybrid: hybrid}
		if done > 0 {
			p.Left = p.Elapsed / time.Duration(done) * time.Duration(len(chosen)-done)
		}
		if hybrid {
			for _, t := range tokens {
				p.Tokens += t
			}
		}
		req.Progress(p)
	}
	progress(0)

	cacheDir := req.CacheDir
	if cacheDir == "" {
		cacheDir, err = os.MkdirTemp("", "memhost-eval-cache-")
		if err != nil {
			return resp, err
		}
		defer os.RemoveAll(cacheDir)
	} else if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return resp, err
	}
	hits0, misses0 := cacheLookups(ctx, cacheDir)

	byN := map[int]bool{}
	for _, m := range chosen {
		byN[m.n] = true
	}
	all, byType := newLMETally(), map[string]*lmeTally{}
	var times []float64
	done := 0
	err = readLongMemEval(req.Path, func(n int, q *lmeQuestion) error {
		if !byN[n] {
			return nil
		}
		sub, cleanup, sessions, turns, err := lmeHome(ctx, h, q, cacheDir)
		if err != nil {
			return fmt.Errorf("question %s: %w", q.ID, err)
		}
		defer cleanup()
		resp.Sessions += sessions
		resp.Turns += turns
		asOf, _ := time.Parse(lmeDateLayout, q.Date) // checked by readLongMemEval
		t0 := time.Now()
		r, err := sub.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: q.Question, MaxResults: lmeResults, AsOf: asOf.Format(time.RFC3339)})
		if err != nil {
			return fmt.Errorf("question %s: %w", q.ID, err)
		}
		times = append(times, ms(time.Since(t0)))
		if resp.Mode == memhost.ModeHybrid && r.Mode != memhost.ModeHybrid {
			resp.KeywordOnly++
		} else {
			resp.Mode, resp.Reason = r.Mode, r.Reason
		}
		if r.Window != nil {
			resp.Windows++
		}
		if resp.Model == "" {
			if st, err := sub.Status(ctx, memhost.StatusRequest{}); err == nil && st.Model != "" {
				resp.Model = st.Provider + "/" + st.Model
			}
		}
		sessionsRanked, turnsRanked := lmeRanking(r.Results, lmeSessionOf(q))
		var evidence []string
		for i, s := range q.HaystackSessions {
			for j, t := range s {
				if t.HasAnswer {
					evidence = append(evidence, lmeTurnKey(lmeFileIDs(q)[i], j))
				}
			}
		}
		sc := lmeScores(q.AnswerSessionIDs, sessionsRanked, evidence, turnsRanked)
		all.add(sc)
		if byType[q.Type] == nil {
			byType[q.Type] = newLMETally()
		}
		byType[q.Type].add(sc)
		done++
		progress(done)
		return nil
	})
	if err != nil {
		return resp, err
	}
	hits1, misses1 := cacheLookups(ctx, cacheDir)
	resp.CacheHits, resp.CacheMisses = hits1-hits0, misses1-misses0
	if resp.Model == "" {
		resp.Model = "none (keyword only)"
	}
	resp.Questions = all.n
	resp.Overall = all.figures()
	for t, ty := range byType {
		resp.ByType[t] = ty.figures()
	}
	resp.SearchMs = percentiles(times)
	resp.DurationMs = ms(time.Since(start))
	return resp, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// cacheLookups reads the shared cache's lifetime hits and misses (0 when
// it does not exist yet).
func cacheLookups(ctx context.Context, dir string) (hits, misses int64) {
	path := filepath.Join(dir, "embeddings.db")
	if _, err := os.Stat(path); err != nil {
		return 0, 0
	}
	c, err := embcache.Open(ctx, path)
	if err != nil {
		return 0, 0
	}
	defer c.Close()
	hits, misses, _ = c.Lookups(ctx)
	return hits, misses
}

// percentiles are the median and the 95th percentile (nearest rank) of
// xs, to three places.
func percentiles(xs []float64) Percentiles {
	if len(xs) == 0 {
		return Percentiles{}
	}
	s := slices.Sorted(slices.Values(xs))
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return round3(s[max(i, 0)])
	}
	return Percentiles{Median: rank(0.5), P95: rank(0.95)}
}

// lmeFileIDs are the session ids of q's haystack as the home's files
// name them: the published id, and "<id>.2", "<id>.3" for a session the
// haystack holds more than once (a few do, on other dates).
func lmeFileIDs(q *lmeQuestion) []string {
	out := make([]string, len(q.HaystackSessionIDs))
	seen := map[string]int{}
	for i, id := range q.HaystackSessionIDs {
		seen[id]++
		out[i] = id
		if seen[id] > 1 {
			out[i] = id + "." + strconv.Itoa(seen[id])
		}
	}
	return out
}

// lmeSessionOf maps a home's session file id back to the published one.
func lmeSessionOf(q *lmeQuestion) map[string]string {
	m := map[string]string{}
	for i, f := range lmeFileIDs(q) {
		m[f] = q.HaystackSessionIDs[i]
	}
	return m
}

// lmeTurnKey names turn j (0-based) of a session file: the turn's id is
// its 1-based place.
func lmeTurnKey(fileID string, j int) string { return fileID + "/" + strconv.Itoa(j+1) }

// lmeHome makes a temporary home holding q's haystack, a session file a
// session, each turn dated with its session's date (UTC, the zone of the
// home), indexed and embedded; its cache folder is cacheDir. cleanup
// closes and removes it.
func lmeHome(ctx context.Context, h *host.Host, q *lmeQuestion, cacheDir string) (sub *host.Host, cleanup func(), sessions, turns int, err error) {
	write := func(home string) error {
		if err := os.Symlink(cacheDir, filepath.Join(home, "cache")); err != nil {
			return err
		}
		dir := filepath.Join(home, "sessions")
		for i, fileID := range lmeFileIDs(q) {
			date, _ := time.Parse(lmeDateLayout, q.HaystackDates[i]) // checked by readLongMemEval
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			for j, t := range q.HaystackSessions[i] {
				if strings.TrimSpace(t.Content) == "" {
					continue
				}
				if err := enc.Encode(memhost.Turn{ID: strconv.Itoa(j + 1), Type: "message", Role: t.Role, Content: t.Content, Timestamp: date.Format("2006-01-02T15:04:05")}); err != nil {
					return err
				}
			}
			if err := os.WriteFile(filepath.Join(dir, fileID+".jsonl"), b.Bytes(), 0o600); err != nil {
				return err
			}
		}
		return nil
	}
	sub, _, cleanup, turns, err = newEvalHome(ctx, h, write, func(cfg *config.Config) { cfg.Timezone = "UTC" })
	return sub, cleanup, len(q.HaystackSessions), turns, err
}

// lmeRanking reads a search's results as sessions and turns, best first.
// A session is retrieved at rank r when one of its turns is the r-th
// distinct session among the results: results are turns, best first, so
// each session takes the rank of its best turn. Turns are "<file id>/<turn
// id>", a place each (a result covering several turns takes several).
// sessionOf maps a home's session id to the published one.
func lmeRanking(results []memhost.TurnResult, sessionOf map[string]string) (sessions, turns []string) {
	seen := map[string]bool{}
	for _, r := range results {
		id := r.Session
		if pub, ok := sessionOf[id]; ok {
			id = pub
		}
		if !seen[id] {
			seen[id] = true
			sessions = append(sessions, id)
		}
		for _, t := range r.Turns {
			turns = append(turns, r.Session+"/"+t)
		}
	}
	return sessions, turns
}

// lmeScore is one question's measures at each of LMEKs, in their order.
type lmeScore struct {
	any, all, ndcg, turnAny, turnShare []float64
}

func lmeScores(answers, sessions, evidence, turns []string) lmeScore {
	var s lmeScore
	for _, k := range LMEKs {
		s.any = append(s.any, recallAny(answers, sessions, k))
		s.all = append(s.all, recallAll(answers, sessions, k))
		s.ndcg = append(s.ndcg, ndcg(answers, sessions, k))
		s.turnAny = append(s.turnAny, recallAny(evidence, turns, k))
		s.turnShare = append(s.turnShare, evidenceRecall(evidence, turns, k))
	}
	return s
}

// recallAny is 1 when one of gold is among the first k of ranked, else 0.
func recallAny(gold, ranked []string, k int) float64 {
	for i, id := range ranked {
		if i == k {
			break
		}
		if slices.Contains(gold, id) {
			return 1
		}
	}
	return 0
}

// recallAll is 1 when every one of gold is among the first k of ranked
// (0 for no gold).
func recallAll(gold, ranked []string, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	top := ranked[:min(k, len(ranked))]
	for _, g := range gold {
		if !slices.Contains(top, g) {
			return 0
		}
	}
	return 1
}

// ndcg is the normalised discounted cumulative gain at k with binary
// relevance: the sum of 1/log2(r+1) over the ranks r (1-based) of gold
// items among the first k of ranked, over that sum for gold ranked first
// (min(k, len(gold)) of them).
func ndcg(gold, ranked []string, k int) float64 {
	dcg, ideal := 0.0, 0.0
	for i, id := range ranked {
		if i == k {
			break
		}
		if slices.Contains(gold, id) {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := range min(k, len(gold)) {
		ideal += 1 / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// lmeTally sums lmeScores.
type lmeTally struct {
	n                                int
	any, all, ndcg, turnAny, turnSum []float64
}

func newLMETally() *lmeTally {
	n := len(LMEKs)
	return &lmeTally{any: make([]float64, n), all: make([]float64, n), ndcg: make([]float64, n), turnAny: make([]float64, n), turnSum: make([]float64, n)}
}

func (t *lmeTally) add(s lmeScore) {
	t.n++
	for i := range LMEKs {
		t.any[i] += s.any[i]
		t.all[i] += s.all[i]
		t.ndcg[i] += s.ndcg[i]
		t.turnAny[i] += s.turnAny[i]
		t.turnSum[i] += s.turnShare[i]
	}
}

func (t *lmeTally) figures() LMEFigures {
	mean := func(sums []float64) map[string]float64 {
		out := map[string]float64{}
		for i, k := range LMEKs {
			out[strconv.Itoa(k)] = round3(sums[i] / float64(max(t.n, 1)))
		}
		return out
	}
	return LMEFigures{Questions: t.n, RecallAny: mean(t.any), RecallAll: mean(t.all), NDCG: mean(t.ndcg), TurnAny: mean(t.turnAny), TurnShare: mean(t.turnSum)}
}
