// Package config reads $MEMHOST_HOME/config.yaml.
//
// Every key is optional; Default holds every key's default. Unknown keys,
// keys given twice and values of the wrong type are reported with the
// key's dotted name and line. Environment variables override the file:
// each key has one, MEMHOST_ followed by its dotted name in upper case
// with dots as underscores (memory.search.maxResults →
// MEMHOST_MEMORY_SEARCH_MAXRESULTS).
package config

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Config is the whole file.
type Config struct {
	// Timezone is an IANA zone name (e.g. "Europe/Berlin") for daily logs;
	// empty means the system's zone.
	Timezone string `yaml:"timezone"`
	Memory   Memory `yaml:"memory"`
	Server   Server `yaml:"server"`
	Health   Health `yaml:"health"`
	// Federation shares the home through git (see Federation).
	Federation Federation `yaml:"federation"`
}

// Server configures `memhost serve`. Both keys are read when the server
// starts.
type Server struct {
	// Listen is the TCP address of the HTTP API and dashboard. Default
	// "127.0.0.1:4321" (DefaultListen); port 0 picks a free one; ""
	// listens on the unix socket in the home only. An address that is not
	// loopback requires a bearer token.
	Listen string `yaml:"listen"`
	// TokenFile holds the bearer token for non-loopback addresses; default
	// "" is brain/serve.token, generated (mode 0600) when needed. A
	// relative path is in the home.
	TokenFile string `yaml:"tokenFile"`
	// Autostart: a command that finds no server for its home starts one
	// in the background (on the unix socket only, unless listen is set in
	// config.yaml) and runs in its own process meanwhile; the next
	// commands answer through it. Default true; false leaves starting one
	// to memhost serve.
	Autostart bool `yaml:"autostart"`
	// IdleExitSeconds is how long a server started on demand waits
	// without a request (or a client following its events or an MCP
	// session) before it exits. Default 3600 (DefaultIdleExitSeconds); 0
	// never. A server started with memhost serve does not exit by itself.
	IdleExitSeconds int `yaml:"idleExitSeconds"`
}

// DefaultIdleExitSeconds is an hour: an agent's calls come in sessions,
// and a server kept between them costs its memory (tens of MB, and the
// model's when one is loaded) but no CPU. Bazel's server waits three
// hours (--max_idle_secs); memhost's costs more to keep and little to
// start again (the index opens in milliseconds).
const DefaultIdleExitSeconds = 3600

// DefaultListen is the default TCP address of the HTTP API, the
// dashboard and the debug API.
const DefaultListen = "127.0.0.1:4321"

// Memory is config.yaml's memory: block.
type Memory struct {
	// NotebookDir is the notebook: absolute, or relative to the home and
	// inside it (".." may not lead out). Default "notebook".
	NotebookDir string `yaml:"notebookDir"`
	// Database is the index file: absolute, or relative to the home and
	// inside it. Default "brain/memory.db".
	Database   string     `yaml:"database"`
	Embedding  Embedding  `yaml:"embedding"`
	Chunking   Chunking   `yaml:"chunking"`
	Sync       Sync       `yaml:"sync"`
	Search     Search     `yaml:"search"`
	Prompt     Prompt     `yaml:"prompt"`
	Compaction Compaction `yaml:"compaction"`
	Context    Context    `yaml:"context"`
	Skills     Skills     `yaml:"skills"`
	Generator  Generator  `yaml:"generator"`
	Episodes   Episodes   `yaml:"episodes"`
	Privacy    Privacy    `yaml:"privacy"`
}

// Privacy says what happens to secrets (API keys, tokens, passwords,
// private keys) found in what is written.
type Privacy struct {
	// Secrets is SecretsRedact (the default: the secret is replaced by a
	// marker naming its rule and a fingerprint before anything is stored,
	// and the write's answer says so), SecretsKeepLocal (stored as
	// written; health fails while the home holds one) or SecretsAllow
	// (no detection).
	Secrets string `yaml:"secrets"`
}

// The values of memory.privacy.secrets.
const (
	SecretsRedact    = "redact"
	SecretsKeepLocal = "keep-local"
	SecretsAllow     = "allow"
)

// Episodes configures the episode logs: a notebook page a day written
// from the transcripts (docs/design-notes.md, "Episode logs").
type Episodes struct {
	// Folder holds the pages, relative to the notebook and inside it.
	// Default "episodes".
	Folder string `yaml:"folder"`
	// EveryMin is how often memhost serve writes today's and yesterday's
	// logs, for conversations that never end (a chat channel's); 0 = off.
	// Default 30.
	EveryMin int `yaml:"everyMin"`
}

// Compaction holds the thresholds for an agent's working context.
type Compaction struct {
	ContextWindow       int `yaml:"contextWindow"`       // default 100000 tokens
	ReserveTokens       int `yaml:"reserveTokens"`       // default 4000, kept for the response
	SoftThresholdTokens int `yaml:"softThresholdTokens"` // default 10000: flush this far before the limit
	KeepRecentTokens    int `yaml:"keepRecentTokens"`    // default 20000 left out of a compaction
	// FlushEveryMessages makes a flush due every this many messages too,
	// whatever their tokens (OpenClaw #5457: a flush on one threshold
	// alone is missed): a long chat of short messages still saves its
	// durable memories. 0 is off. Default 50.
	FlushEveryMessages int    `yaml:"flushEveryMessages"`
	FlushPrompt        string `yaml:"flushPrompt"` // what the agent is told when a flush is due
}

// DefaultFlushPrompt is the default of memory.compaction.flushPrompt.
const DefaultFlushPrompt = "Session nearing compaction. Write any durable memories to your notebook or daily log now. After compaction, only your notebook and recent daily logs will be available."

// Embedding chooses the embeddings provider plugin and tunes the
// embedding queue.
type Embedding struct {
	// Plugin is the active provider (memhost-embeddings-<plugin>).
	// Default "": the local provider when it is installed, else none
	// (keyword-only search).
	Plugin string `yaml:"plugin"`
	// ModelsDir holds downloaded models: absolute, or relative to the
	// home and inside it. Default "models".
	ModelsDir string `yaml:"modelsDir"`
	// Options holds each plugin's settings by plugin name, passed to its
	// Configure; switching plugins keeps the others'.
	Options map[string]map[string]string `yaml:"options"`
	// BatchSize is how many chunks go to the provider in one call. Default
	// 64: with the local provider's two workers, 2,200 WordNet chunks
	// embedded in 25.0-26.3 s at 64 against 30.0-32.0 s at 32 (both cores
	// idle while the host writes a batch's vectors, and one while the other
	// ends the batch's last text) and 25.8-27.7 s at 128 (docs/benchmarks.md).
	// A recall's own embedding takes at most embedq's recallBatch a call.
	BatchSize int `yaml:"batchSize"`
	// RecallBudgetMs bounds the queued chunks a recall embeds before it
	// searches; what is left is embedded in the background. Default 2000.
	RecallBudgetMs int `yaml:"recallBudgetMs"`
	// QueryTimeoutMs bounds embedding a recall's query; a provider that
	// takes longer is restarted and the recall answers keyword-only.
	// Default 5000.
	QueryTimeoutMs int `yaml:"queryTimeoutMs"`
}

// Chunking tunes the markdown chunker.
type Chunking struct {
	MaxTokens       int  `yaml:"maxTokens"`       // default 400
	OverlapTokens   int  `yaml:"overlapTokens"`   // default 80
	RespectHeadings bool `yaml:"respectHeadings"` // default true; chunks never cross H1/H2 either way
}

// Sync tunes keeping the index in step with the notebook.
type Sync struct {
	WatchDebounceMs int  `yaml:"watchDebounceMs"` // default 1500
	SyncOnStart     bool `yaml:"syncOnStart"`     // default true
	SyncOnSearch    bool `yaml:"syncOnSearch"`    // default true: check for edited pages before every search
}

// Search holds recall's defaults.
type Search struct {
	MaxResults int     `yaml:"maxResults"` // default 15
	MinScore   float64 `yaml:"minScore"`   // default 0.25
	// Fusion is how hybrid search merges the keyword and vector results:
	// FusionLinear (default) or FusionRRF.
	Fusion  string `yaml:"fusion"`
	FusionK int    `yaml:"fusionK"` // default 60, for FusionRRF
	// MinSimilarity drops vector hits whose cosine similarity to the query
	// is below it before fusion, so a hybrid recall does not list every
	// nearest neighbour however unrelated. Default 0.2.
	MinSimilarity float64 `yaml:"minSimilarity"`
	// VectorWeight is the vector side's weight in the fusion (BM25's is
	// 1). Default 1: the best hit found by vectors alone scores 0.5.
	VectorWeight float64 `yaml:"vectorWeight"`
}

// Fusion methods of hybrid search.
const (
	// FusionLinear is the weighted mean of the BM25 score and the cosine
	// similarity, each divided by the best of its kind among the candidates.
	FusionLinear = "linear"
	// FusionRRF is Reciprocal Rank Fusion: only ranks count.
	FusionRRF = "rrf"
)

// Prompt shapes the block printed by `memhost context`.
type Prompt struct {
	// ReferenceDir is the folder whose pages context always shows,
	// relative to the notebook and inside it: absolute paths and ".."
	// leading out are refused. Default "reference".
	ReferenceDir           string `yaml:"referenceDir"`
	DailyWindow            int    `yaml:"dailyWindow"`            // default 2: today and yesterday
	MaxPerFileChars        int    `yaml:"maxPerFileChars"`        // default 8000
	MaxTotalReferenceChars int    `yaml:"maxTotalReferenceChars"` // default 32000
	// MaxFactsChars bounds the current facts of the most-mentioned
	// entities that context shows (knowledge/entities/); 0 shows none.
	// Default 2000.
	MaxFactsChars int `yaml:"maxFactsChars"`
}

// Default returns the defaults of every key.
func Default() Config {
	return Config{
		Memory: Memory{
			NotebookDir: "notebook",
			Database:    "brain/memory.db",
			Embedding:   Embedding{ModelsDir: "models", Options: map[string]map[string]string{}, BatchSize: 64, RecallBudgetMs: 2000, QueryTimeoutMs: 5000},
			Chunking:    Chunking{MaxTokens: 400, OverlapTokens: 80, RespectHeadings: true},
			Sync:        Sync{WatchDebounceMs: 1500, SyncOnStart: true, SyncOnSearch: true},
			Search:      Search{MaxResults: 15, MinScore: 0.25, Fusion: FusionLinear, FusionK: 60, MinSimilarity: 0.2, VectorWeight: 1},
			Prompt:      Prompt{ReferenceDir: "reference", DailyWindow: 2, MaxPerFileChars: 8000, MaxTotalReferenceChars: 32000, MaxFactsChars: 2000},
			Compaction:  Compaction{ContextWindow: 100000, ReserveTokens: 4000, SoftThresholdTokens: 10000, KeepRecentTokens: 20000, FlushEveryMessages: 50, FlushPrompt: DefaultFlushPrompt},
			Context:     DefaultContext(),
			Skills:      Skills{MinObservations: 3},
			Generator:   DefaultGenerator(),
			Episodes:    Episodes{Folder: "episodes", EveryMin: 30},
			Privacy:     Privacy{Secrets: SecretsRedact},
		},
		Server:     Server{Listen: DefaultListen, Autostart: true, IdleExitSeconds: DefaultIdleExitSeconds},
		Health:     DefaultHealth(),
		Federation: DefaultFederation(),
	}
}

// Template is the commented config.yaml that `memhost init` writes: every
// key with its default.
//
//go:embed config.yaml
var Template string

// FileName is the config file's name in the home.
const FileName = "config.yaml"

// Error is a problem with one key.
type Error struct {
	Source string // "config.yaml" or an environment variable
	Key    string // dotted, e.g. memory.search.maxResults
	Line   int    // 0 when not from the file
	Msg    string
}

func (e *Error) Error() string {
	where := e.Source
	if e.Line > 0 {
		where = fmt.Sprintf("%s line %d", e.Source, e.Line)
	}
	return fmt.Sprintf("%s: %s: %s", where, showKey(e.Key), e.Msg)
}

// showKey returns a dotted key as messages show it: an empty name in it
// (YAML's "": 1, or an anchor with no name after it, &a:) is shown as ""
// and said to be empty, rather than leaving nothing between two colons.
func showKey(key string) string {
	parts := strings.Split(key, ".")
	empty := false
	for i, p := range parts {
		if p == "" {
			parts[i], empty = `""`, true
		}
	}
	if !empty {
		return key
	}
	return strings.Join(parts, ".") + " (empty key)"
}

// Load reads the config file at path (a missing file means all defaults),
// applies environment overrides from getenv (nil for none) and validates.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := Default()
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return cfg, err
	default:
		defer f.Close()
		if err := Parse(f, &cfg, path); err != nil {
			return cfg, err
		}
	}
	if getenv != nil {
		if err := applyEnv(reflect.ValueOf(&cfg).Elem(), "", getenv); err != nil {
			return cfg, err
		}
	}
	return cfg, cfg.Validate()
}

// Parse decodes YAML from r into cfg, which holds the defaults for keys the
// YAML leaves out. name names the source in errors.
func Parse(r io.Reader, cfg *Config, name string) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(r).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty file
		}
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Content) == 0 {
		return nil
	}
	if err := duplicates(doc.Content[0], "", name); err != nil {
		return err
	}
	return decode(doc.Content[0], reflect.ValueOf(cfg).Elem(), "", name)
}

// duplicates refuses a key given twice in one mapping. Decoding a yaml.Node
// does not check it, and decode would let the later value win (or merge
// two memory: blocks) without a word.
func duplicates(n *yaml.Node, prefix, src string) error {
	switch n.Kind {
	case yaml.MappingNode:
		first := map[string]int{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if line, ok := first[k.Value]; ok {
				return &Error{src, prefix + k.Value, k.Line, fmt.Sprintf("duplicate key (first on line %d)", line)}
			}
			first[k.Value] = k.Line
			if err := duplicates(n.Content[i+1], prefix+k.Value+".", src); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := duplicates(c, prefix, src); err != nil {
				return err
			}
		}
	}
	return nil
}

// decode walks a mapping node against a struct, so that an unknown key or
// a bad value is reported with its full dotted name.
func decode(n *yaml.Node, v reflect.Value, prefix, src string) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil // "memory:" with nothing under it
	}
	if n.Kind != yaml.MappingNode {
		key := strings.TrimSuffix(prefix, ".")
		if key == "" {
			key = "(top level)"
		}
		return &Error{src, key, n.Line, "expected a mapping of keys"}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		field, ok := fieldByTag(v, k.Value)
		if !ok {
			return &Error{src, key, k.Line, "unknown key" + suggest(v, k.Value)}
		}
		if field.Kind() == reflect.Struct {
			if err := decode(val, field, key+".", src); err != nil {
				return err
			}
			continue
		}
		if err := val.Decode(field.Addr().Interface()); err != nil {
			return &Error{src, key, val.Line, fmt.Sprintf("expected %s, got %q", typeName(field.Type()), val.Value)}
		}
	}
	return nil
}

func fieldByTag(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).Tag.Get("yaml") == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// suggest names a key that differs from name only in case.
func suggest(v reflect.Value, name string) string {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if tag := t.Field(i).Tag.Get("yaml"); strings.EqualFold(tag, name) {
			return fmt.Sprintf(" (did you mean %s?)", tag)
		}
	}
	return ""
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Map:
		return "a mapping of plugin names to their options"
	}
	return t.String()
}

func applyEnv(v reflect.Value, prefix string, getenv func(string) string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		key := prefix + t.Field(i).Tag.Get("yaml")
		f := v.Field(i)
		if f.Kind() == reflect.Struct {
			if err := applyEnv(f, key+".", getenv); err != nil {
				return err
			}
			continue
		}
		if f.Kind() == reflect.Map {
			continue // plugin options are set in the file or with `memhost plugins use --set`
		}
		name := EnvName(key)
		s := getenv(name)
		if s == "" {
			continue
		}
		if f.Kind() == reflect.String {
			f.SetString(s)
			continue
		}
		if err := yaml.Unmarshal([]byte(s), f.Addr().Interface()); err != nil {
			return &Error{name, key, 0, fmt.Sprintf("expected %s, got %q", typeName(f.Type()), s)}
		}
	}
	return nil
}

// Overrides lists the environment variables getenv sets that override a
// key, as sorted "NAME=value" pairs: two processes with equal lists read
// config.yaml the same way.
func Overrides(getenv func(string) string) []string {
	var out []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			key := prefix + t.Field(i).Tag.Get("yaml")
			switch t.Field(i).Type.Kind() {
			case reflect.Struct:
				walk(t.Field(i).Type, key+".")
			case reflect.Map:
			default:
				if v := getenv(EnvName(key)); v != "" {
					out = append(out, EnvName(key)+"="+v)
				}
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	sort.Strings(out)
	return out
}

// IsOverride reports whether the environment variable name overrides a
// key of config.yaml (EnvName of one).
func IsOverride(name string) bool {
	return len(Overrides(func(k string) string {
		if k == name {
			return "x"
		}
		return ""
	})) > 0
}

// EnvName is the environment variable that overrides a dotted key.
func EnvName(key string) string {
	return "MEMHOST_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// MaxTokens bounds every token count in the file (1<<30, far above any
// model's context window), so that sums of them cannot overflow an int:
// reserveTokens: 9223372036854775807 plus softThresholdTokens: 1 would
// otherwise wrap round to a negative sum smaller than contextWindow.
const MaxTokens = 1 << 30

// Validate checks ranges and names.
func (c Config) Validate() error {
	m := c.Memory
	bad := func(key, msg string) error { return &Error{"config", key, 0, msg} }
	if err := finite(reflect.ValueOf(c), ""); err != nil {
		return err
	}
	switch {
	case m.NotebookDir == "":
		return bad("memory.notebookDir", "must not be empty")
	case m.Database == "":
		return bad("memory.database", "must not be empty")
	case !inHome(m.NotebookDir):
		return bad("memory.notebookDir", fmt.Sprintf("a relative folder must stay inside the home, got %q (give an absolute path for a folder elsewhere)", m.NotebookDir))
	case !inHome(m.Database):
		return bad("memory.database", fmt.Sprintf("a relative file must stay inside the home, got %q (give an absolute path for a file elsewhere)", m.Database))
	case m.Embedding.ModelsDir == "":
		return bad("memory.embedding.modelsDir", "must not be empty")
	case !inHome(m.Embedding.ModelsDir):
		return bad("memory.embedding.modelsDir", fmt.Sprintf("a relative folder must stay inside the home, got %q (give an absolute path for a folder elsewhere)", m.Embedding.ModelsDir))
	case m.Chunking.MaxTokens < 16 || m.Chunking.MaxTokens > MaxTokens:
		return bad("memory.chunking.maxTokens", fmt.Sprintf("must be between 16 and %d, got %d", MaxTokens, m.Chunking.MaxTokens))
	case m.Chunking.OverlapTokens < 0 || m.Chunking.OverlapTokens >= m.Chunking.MaxTokens:
		return bad("memory.chunking.overlapTokens", fmt.Sprintf("must be between 0 and maxTokens-1 (%d), got %d", m.Chunking.MaxTokens-1, m.Chunking.OverlapTokens))
	case m.Sync.WatchDebounceMs < 0:
		return bad("memory.sync.watchDebounceMs", "must not be negative")
	case m.Search.MaxResults < 1:
		return bad("memory.search.maxResults", fmt.Sprintf("must be at least 1, got %d", m.Search.MaxResults))
	case m.Search.MinScore < 0 || m.Search.MinScore > 1:
		return bad("memory.search.minScore", fmt.Sprintf("must be between 0 and 1, got %g", m.Search.MinScore))
	case m.Search.MinSimilarity < -1 || m.Search.MinSimilarity > 1:
		return bad("memory.search.minSimilarity", fmt.Sprintf("must be between -1 and 1, got %g", m.Search.MinSimilarity))
	case m.Search.VectorWeight < 0 || m.Search.VectorWeight > 10:
		return bad("memory.search.vectorWeight", fmt.Sprintf("must be between 0 and 10, got %g", m.Search.VectorWeight))
	case m.Search.Fusion != FusionLinear && m.Search.Fusion != FusionRRF:
		return bad("memory.search.fusion", fmt.Sprintf("must be %s or %s, got %q", FusionLinear, FusionRRF, m.Search.Fusion))
	case m.Search.FusionK < 1:
		return bad("memory.search.fusionK", fmt.Sprintf("must be at least 1, got %d", m.Search.FusionK))
	case m.Prompt.ReferenceDir == "":
		return bad("memory.prompt.referenceDir", "must not be empty")
	case !filepath.IsLocal(m.Prompt.ReferenceDir):
		return bad("memory.prompt.referenceDir", fmt.Sprintf("must be a folder inside the notebook, got %q", m.Prompt.ReferenceDir))
	case m.Episodes.Folder == "" || !filepath.IsLocal(m.Episodes.Folder):
		return bad("memory.episodes.folder", fmt.Sprintf("must be a folder inside the notebook, got %q", m.Episodes.Folder))
	case m.Episodes.EveryMin < 0:
		return bad("memory.episodes.everyMin", "must not be negative")
	case m.Privacy.Secrets != SecretsRedact && m.Privacy.Secrets != SecretsKeepLocal && m.Privacy.Secrets != SecretsAllow:
		return bad("memory.privacy.secrets", fmt.Sprintf("choose redact, keep-local or allow, got %q", m.Privacy.Secrets))
	case m.Prompt.DailyWindow < 0:
		return bad("memory.prompt.dailyWindow", "must not be negative")
	case m.Prompt.MaxPerFileChars < 1:
		return bad("memory.prompt.maxPerFileChars", "must be at least 1")
	case m.Embedding.BatchSize < 1:
		return bad("memory.embedding.batchSize", fmt.Sprintf("must be at least 1, got %d", m.Embedding.BatchSize))
	case m.Embedding.RecallBudgetMs < 0:
		return bad("memory.embedding.recallBudgetMs", "must not be negative")
	case m.Embedding.QueryTimeoutMs < 1:
		return bad("memory.embedding.queryTimeoutMs", fmt.Sprintf("must be at least 1, got %d", m.Embedding.QueryTimeoutMs))
	case m.Compaction.ContextWindow < 1000 || m.Compaction.ContextWindow > MaxTokens:
		return bad("memory.compaction.contextWindow", fmt.Sprintf("must be between 1000 and %d, got %d", MaxTokens, m.Compaction.ContextWindow))
	case m.Compaction.ReserveTokens < 0 || m.Compaction.ReserveTokens > MaxTokens:
		return bad("memory.compaction.reserveTokens", fmt.Sprintf("must be between 0 and %d, got %d", MaxTokens, m.Compaction.ReserveTokens))
	case m.Compaction.SoftThresholdTokens < 0 || m.Compaction.SoftThresholdTokens > MaxTokens:
		return bad("memory.compaction.softThresholdTokens", fmt.Sprintf("must be between 0 and %d, got %d", MaxTokens, m.Compaction.SoftThresholdTokens))
	case m.Compaction.KeepRecentTokens < 0 || m.Compaction.KeepRecentTokens > MaxTokens:
		return bad("memory.compaction.keepRecentTokens", fmt.Sprintf("must be between 0 and %d, got %d", MaxTokens, m.Compaction.KeepRecentTokens))
	case m.Compaction.ReserveTokens+m.Compaction.SoftThresholdTokens >= m.Compaction.ContextWindow:
		return bad("memory.compaction.softThresholdTokens", "reserveTokens + softThresholdTokens must be less than contextWindow")
	case strings.TrimSpace(m.Compaction.FlushPrompt) == "":
		return bad("memory.compaction.flushPrompt", "must not be empty")
	case m.Prompt.MaxTotalReferenceChars < 0:
		return bad("memory.prompt.maxTotalReferenceChars", "must not be negative")
	case m.Prompt.MaxFactsChars < 0:
		return bad("memory.prompt.maxFactsChars", "must not be negative")
	}
	if err := c.Health.validate(); err != nil {
		return err
	}
	if c.Server.IdleExitSeconds < 0 {
		return bad("server.idleExitSeconds", fmt.Sprintf("must not be negative (0 is never), got %d", c.Server.IdleExitSeconds))
	}
	if m.Compaction.FlushEveryMessages < 0 {
		return bad("memory.compaction.flushEveryMessages", fmt.Sprintf("must not be negative (0 is off), got %d", m.Compaction.FlushEveryMessages))
	}
	if err := m.Context.validate(); err != nil {
		return err
	}
	if m.Skills.MinObservations < 2 {
		return bad("memory.skills.minObservations", fmt.Sprintf("must be at least 2 (a sequence seen once is no pattern), got %d", m.Skills.MinObservations))
	}
	if err := m.Generator.validate(); err != nil {
		return err
	}
	if err := c.Federation.validate(); err != nil {
		return err
	}
	if _, err := c.Location(); err != nil {
		return bad("timezone", fmt.Sprintf("unknown time zone %q", c.Timezone))
	}
	return nil
}

// finite refuses a NaN or infinite number anywhere in v, a struct of
// config.yaml's keys: YAML spells them .nan and .inf, and NaN passes every
// range check written "x < lo || x > hi".
func finite(v reflect.Value, prefix string) error {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		key := prefix + t.Field(i).Tag.Get("yaml")
		switch f := v.Field(i); f.Kind() {
		case reflect.Struct:
			if err := finite(f, key+"."); err != nil {
				return err
			}
		case reflect.Float32, reflect.Float64:
			switch x := f.Float(); {
			case math.IsNaN(x):
				return &Error{"config", key, 0, "must be a number, got NaN"}
			case math.IsInf(x, 0):
				return &Error{"config", key, 0, fmt.Sprintf("must be a finite number, got %g", x)}
			}
		}
	}
	return nil
}

// inHome reports whether a home path is allowed: an absolute path may be
// anywhere (a notebook kept in a synced folder, an index on another disk),
// but a relative one is resolved against the home and must stay in it, so
// that "../.." cannot silently point memhost at a parent folder.
func inHome(p string) bool { return filepath.IsAbs(p) || filepath.IsLocal(p) }

// Location is the time zone for daily logs.
func (c Config) Location() (*time.Location, error) {
	if c.Timezone == "" {
		return time.Local, nil
	}
	return time.LoadLocation(c.Timezone)
}
