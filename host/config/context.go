package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Context shapes the memory context of `memhost context --query` and a
// session's working memory (`memhost context --session`).
type Context struct {
	// Budget is the memory context's tokens, its share of the working
	// context beside the notebook's block, the checkpoint and the recent
	// turns. Default 5000.
	Budget int `yaml:"budget"`
	// PerTier is how many items a tier may give. Default DefaultPerTier.
	PerTier int `yaml:"perTier"`
	// HalfLife turns on time decay ("30d", "12h"): a turn's, a fact's or
	// a daily log's score halves with each HalfLife of age. Default ""
	// (off): the LoCoMo evaluation ranks by relevance alone.
	HalfLife string  `yaml:"halfLife"`
	Working  Working `yaml:"working"`
}

// Skills shapes procedural memory (memhost skills).
type Skills struct {
	// MinObservations is how many times, in two sessions or more, a tool
	// sequence must be seen before memhost proposes it as a skill page;
	// until then it is a candidate. Default 3.
	MinObservations int `yaml:"minObservations"`
}

// Working holds the budgets of a session's working memory.
type Working struct {
	SystemTokens     int `yaml:"systemTokens"`     // the notebook's block; default 5000
	CheckpointTokens int `yaml:"checkpointTokens"` // the last summary; default 3000
	RecentTokens     int `yaml:"recentTokens"`     // the most recent turns; default 40000
	// CompactAt: recent turns over this many tokens make a compaction
	// due (summarise the oldest half). Default 35000.
	CompactAt int `yaml:"compactAt"`
}

// DefaultPerTier is the items a tier gives by default, chosen on the
// LoCoMo dev split (memhost eval --mixed, keyword search, the default
// budget of 5,000 tokens): the share of the evidence turns in the memory
// context (min score 0; at 20 the default 0.25 gives the same) was 69.3%
// at 5 a tier, 78.3% at 10, 83.8% at 20 and 85.5% at
// 30 (in a home crowded with other conversations' daily logs 57.1, 68.5,
// 78.8 and 82.7%), using on average 284, 550, 1,036 and 1,491 tokens
// (crowded: 1,013, 1,937, 3,349, 3,953). 20 takes most of the gain and
// leaves a crowded home a quarter of the budget (docs/benchmarks.md).
const DefaultPerTier = 20

// DefaultContext returns the budgets' defaults.
func DefaultContext() Context {
	return Context{Budget: 5000, PerTier: DefaultPerTier, Working: Working{SystemTokens: 5000, CheckpointTokens: 3000, RecentTokens: 40000, CompactAt: 35000}}
}

// ParseHalfLife reads a half-life: a Go duration ("12h", "90m") or a
// number of days ("30d"); "" is 0, no decay.
func ParseHalfLife(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n float64
		n, err = strconv.ParseFloat(days, 64)
		d = time.Duration(n * float64(24*time.Hour))
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 30d or 12h", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q must be longer than nothing", s)
	}
	return d, nil
}

func (c Context) validate() error {
	bad := func(key, msg string) error { return &Error{"config", "memory.context." + key, 0, msg} }
	for _, kv := range []struct {
		key string
		v   int
	}{{"budget", c.Budget}, {"perTier", c.PerTier}, {"working.systemTokens", c.Working.SystemTokens}, {"working.checkpointTokens", c.Working.CheckpointTokens},
		{"working.recentTokens", c.Working.RecentTokens}, {"working.compactAt", c.Working.CompactAt}} {
		if kv.v < 1 {
			return bad(kv.key, fmt.Sprintf("must be at least 1, got %d", kv.v))
		}
	}
	if _, err := ParseHalfLife(c.HalfLife); err != nil {
		return bad("halfLife", err.Error())
	}
	return nil
}
