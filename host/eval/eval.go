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
	"sort"
	"strconv"
	"strings"
	"time"

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
	resp := Response{Recall: map[string]float64{}, ByCategory: map[string]map[string]float64{}, ByConversation: map[string]map[string]float64{}}
	sums := map[int]float64{}
	catSums := map[int]map[int]float64{}
	catN := map[int]int{}
	for _, conv := range convs {
		src := filepath.Join(req.Dir, "sessions", conv)
		sub, cleanup, turns, err := evalHome(ctx, h, src)
		if err != nil {
			return resp, fmt.Errorf("conversation %s: %w", conv, err)
		}
		resp.Turns += turns
		convSums := map[int]float64{}
		for _, q := range byConv[conv] {
			r, err := sub.ConversationSearch(ctx, host.ConversationSearchRequest{Query: q.Question, MaxResults: ks[len(ks)-1]})
			if err != nil {
				cleanup()
				return resp, fmt.Errorf("question %s: %w", q.ID, err)
			}
			resp.Mode, resp.Reason = r.Mode, r.Reason
			var ranked []string // turn ids in result order, a place each
			for _, res := range r.Results {
				ranked = append(ranked, res.Turns...)
			}
			if catSums[q.Category] == nil {
				catSums[q.Category] = map[int]float64{}
			}
			catN[q.Category]++
			for _, k := range ks {
				rec := evidenceRecall(q.Evidence, ranked, k)
				sums[k] += rec
				catSums[q.Category][k] += rec
				convSums[k] += rec
			}
			resp.Queries++
		}
		resp.ByConversation[conv] = meanRecall(ks, convSums, len(byConv[conv]))
		if resp.Model == "" {
			if st, err := sub.Status(ctx, host.StatusRequest{}); err == nil && st.Model != "" {
				resp.Model = st.Provider + "/" + st.Model
			}
		}
		cleanup()
	}
	if resp.Model == "" {
		resp.Model = "none (keyword only)"
	}
	resp.Recall = meanRecall(ks, sums, resp.Queries)
	for c, m := range catSums {
		resp.ByCategory[strconv.Itoa(c)] = meanRecall(ks, m, catN[c])
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

// evalHome makes a temporary home holding one conversation's sessions,
// indexed and embedded, with h's provider settings and models; cleanup
// closes it and removes it.
func evalHome(ctx context.Context, h *host.Host, src string) (sub *host.Host, cleanup func(), turns int, err error) {
	home, err := os.MkdirTemp("", "memhost-eval-")
	if err != nil {
		return nil, nil, 0, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(home)
		}
	}()
	entries, err := os.ReadDir(src)
	if err != nil {
		return nil, nil, 0, err
	}
	if err := os.MkdirAll(filepath.Join(home, "sessions"), 0o755); err != nil {
		return nil, nil, 0, err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return nil, nil, 0, err
		}
		if err := os.WriteFile(filepath.Join(home, "sessions", e.Name()), b, 0o644); err != nil {
			return nil, nil, 0, err
		}
	}
	sub, err = h.Derive(ctx, home, func(cfg *config.Config) {
		cfg.Memory.NotebookDir = filepath.Join(home, "notebook")
		cfg.Memory.Database = filepath.Join(home, "brain", "memory.db")
		cfg.Memory.Search.MinScore = 0          // rank everything: recall@k judges the order
		cfg.Memory.Embedding.RecallBudgetMs = 0 // embedded below, once
	})
	if err != nil {
		return nil, nil, 0, err
	}
	cleanup = func() { sub.Close(); os.RemoveAll(home) }
	res, err := sub.Sync(ctx, host.SyncRequest{})
	if err == nil {
		_, err = sub.Embed(ctx, host.EmbedRequest{})
		if errors.Is(err, host.ErrProviderNotReady) {
			err = nil // keyword-only: the eval says so
		}
	}
	if err != nil {
		sub.Close()
		return nil, nil, 0, err
	}
	return sub, cleanup, res.Chunks, nil
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
