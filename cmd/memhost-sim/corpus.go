package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// A conversation is one session of real dialogue the agent replays: a
// LoCoMo session or a LongMemEval haystack session.
type conversation struct {
	ID    string // where it came from: "locomo/conv-26/session_3", "lme/<haystack id>"
	Turns []turn
}

type turn struct {
	Role    string // user | assistant
	Content string
}

// A question is a LongMemEval question the agent asks once the last of its
// haystack sessions has been replayed: answered when one of its answer
// sessions is among the top five sessions conversation-search returns.
type question struct {
	ID, Type, Text string
	Answers        map[string]bool // conversation IDs holding the answer
	Last           int             // index in the schedule of its last haystack session
}

// corpus is the schedule of conversations, in the order they are replayed,
// and the questions that come due along it.
type corpus struct {
	Convs     []conversation
	Questions []question
}

// loadCorpus reads the dev sets in bench (shared/bench) and orders at
// least n conversations: LongMemEval questions one after another (each
// question's haystack in date order, a session shared with an earlier
// question replayed once), with a LoCoMo session every fifth slot, in its
// conversation's order. Abstention questions are replayed but not asked.
func loadCorpus(bench string, n int, rng *rand.Rand) (*corpus, error) {
	locomo, err := loadLoCoMo(filepath.Join(bench, "locomo-dev", "sessions"))
	if err != nil {
		return nil, err
	}
	lme, err := loadLongMemEval(filepath.Join(bench, "longmemeval-dev", "longmemeval_s_dev.json"))
	if err != nil {
		return nil, err
	}
	rng.Shuffle(len(lme), func(i, j int) { lme[i], lme[j] = lme[j], lme[i] })

	c := &corpus{}
	seen := map[string]bool{}
	li := 0
	add := func(cv conversation) {
		if len(c.Convs)%5 == 4 && li < len(locomo) {
			c.Convs = append(c.Convs, locomo[li])
			li++
		}
		c.Convs = append(c.Convs, cv)
	}
	for _, q := range lme {
		if len(c.Convs) >= n {
			break
		}
		for _, cv := range q.haystack {
			if !seen[cv.ID] {
				seen[cv.ID] = true
				add(cv)
			}
		}
		if !strings.HasSuffix(q.ID, "_abs") {
			c.Questions = append(c.Questions, question{ID: q.ID, Type: q.Type, Text: q.Text, Answers: q.answers, Last: len(c.Convs) - 1})
		}
	}
	for len(c.Convs) < n && li < len(locomo) {
		c.Convs = append(c.Convs, locomo[li])
		li++
	}
	if len(c.Convs) < n {
		return nil, fmt.Errorf("%s: %d conversations, the run needs %d", bench, len(c.Convs), n)
	}
	return c, nil
}

// loadLoCoMo reads shared/bench's LoCoMo layout: a folder per
// conversation, a JSONL file per session, sessions in their number's order.
func loadLoCoMo(dir string) ([]conversation, error) {
	convs, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []conversation
	for _, cd := range convs {
		files, err := filepath.Glob(filepath.Join(dir, cd.Name(), "*.jsonl"))
		if err != nil {
			return nil, err
		}
		sort.Slice(files, func(i, j int) bool { return sessionNumber(files[i]) < sessionNumber(files[j]) })
		for _, f := range files {
			cv, err := readLoCoMoSession(f)
			if err != nil {
				return nil, err
			}
			cv.ID = "locomo/" + cd.Name() + "/" + strings.TrimSuffix(filepath.Base(f), ".jsonl")
			out = append(out, cv)
		}
	}
	return out, nil
}

func sessionNumber(path string) int {
	var n int
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	fmt.Sscanf(base[strings.LastIndexAny(base, "_-")+1:], "%d", &n)
	return n
}

func readLoCoMoSession(path string) (conversation, error) {
	f, err := os.Open(path)
	if err != nil {
		return conversation{}, err
	}
	defer f.Close()
	var cv conversation
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l struct{ Role, Speaker, Content string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return conversation{}, fmt.Errorf("%s: %w", path, err)
		}
		cv.Turns = append(cv.Turns, turn{Role: l.Role, Content: l.Speaker + ": " + l.Content})
	}
	return cv, sc.Err()
}

type lmeQuestion struct {
	ID, Type, Text string
	answers        map[string]bool
	haystack       []conversation // in date order
}

// loadLongMemEval reads a LongMemEval file as released.
func loadLongMemEval(path string) ([]lmeQuestion, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw []struct {
		QuestionID   string   `json:"question_id"`
		QuestionType string   `json:"question_type"`
		Question     string   `json:"question"`
		AnswerIDs    []string `json:"answer_session_ids"`
		Dates        []string `json:"haystack_dates"`
		SessionIDs   []string `json:"haystack_session_ids"`
		Sessions     [][]turn `json:"haystack_sessions"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []lmeQuestion
	for _, r := range raw {
		if len(r.Dates) != len(r.Sessions) || len(r.SessionIDs) != len(r.Sessions) {
			return nil, fmt.Errorf("%s: question %s: %d dates, %d ids, %d sessions", path, r.QuestionID, len(r.Dates), len(r.SessionIDs), len(r.Sessions))
		}
		q := lmeQuestion{ID: r.QuestionID, Type: r.QuestionType, Text: r.Question, answers: map[string]bool{}}
		for _, id := range r.AnswerIDs {
			q.answers["lme/"+id] = true
		}
		order := make([]int, len(r.Sessions))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(i, j int) bool { return lmeDate(r.Dates[order[i]]).Before(lmeDate(r.Dates[order[j]])) })
		for _, i := range order {
			q.haystack = append(q.haystack, conversation{ID: "lme/" + r.SessionIDs[i], Turns: r.Sessions[i]})
		}
		out = append(out, q)
	}
	return out, nil
}

// lmeDate reads LongMemEval's "2023/05/20 (Sat) 02:21"; an unreadable
// date sorts first (the order is then the file's).
func lmeDate(s string) time.Time {
	t, err := time.Parse("2006/01/02 (Mon) 15:04", s)
	if err != nil {
		return time.Time{}
	}
	return t
}
