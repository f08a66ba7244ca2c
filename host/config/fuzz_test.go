package config

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// keys are the dotted names of every key and block of Config.
func keys() map[string]bool {
	out := map[string]bool{}
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := 0; i < t.NumField(); i++ {
			key := prefix + t.Field(i).Tag.Get("yaml")
			out[key] = true
			if t.Field(i).Type.Kind() == reflect.Struct {
				walk(t.Field(i).Type, key+".")
			}
		}
	}
	walk(reflect.TypeOf(Config{}), "")
	return out
}

// FuzzParse checks config.yaml parsing on any bytes: no panic; an error
// names its key (or is YAML's own, prefixed with the file name); what
// parses either validates, with every value in its range, or gives an
// error naming a real key; Load says the same as Parse and Validate; and a
// valid config rewritten as SetPlugin rewrites it parses back to itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"# only a comment\n",
		Template,
		strings.ReplaceAll(Template, "# ", ""), // every default, uncommented
		"memory:\n",
		"memory:\n  search:\n    maxResults: 20\n    fusion: rrf\n",
		"memory:\n  search:\n    MaxResults: 20\n",
		"memory:\n  chunking:\n    maxTokens: 100\n    overlapTokens: 100\n",
		"memory:\n  chunking:\n    maxTokens: ten\n",
		"memory:\n  search:\n    minScore: .nan\n",
		"memory:\n  search:\n    vectorWeight: .inf\n",
		"memory:\n  search:\n    minSimilarity: .NaN\n",
		"memory:\n  search:\n    vectorWeight: .nan\n",
		"health:\n  minCacheHitRate: .nan\n",
		"memory:\n  compaction:\n    reserveTokens: 9223372036854775807\n    softThresholdTokens: 1\n",
		"memory:\n  compaction:\n    contextWindow: 9223372036854775807\n    reserveTokens: 9223372036854775807\n    softThresholdTokens: 9223372036854775807\n",
		"memory:\n  compaction:\n    keepRecentTokens: -9223372036854775808\n",
		"memory:\n  embedding:\n    plugin: ollama\n    options:\n      ollama:\n        url: http://127.0.0.1:11434\n      hello: {}\n",
		"memory:\n  embedding:\n    options: null\n",
		"memory:\n  embedding:\n    options:\n      ollama: [1, 2]\n",
		"timezone: Europe/Berlin\n",
		"timezone: Not/AZone\n",
		"timezone: ../../etc/passwd\n",
		"server:\n  listen: \"\"\n  tokenFile: /run/token\n",
		"memory: [1, 2]\n",
		"- a\n- b\n",
		"just a string",
		"memory:\n  notebookDir: &a notes\n  database: *a\n",
		"memory: !!map {}\n",
		"---\nmemory: {}\n---\nserver: {}\n",
		"\ufeffmemory:\n  sync:\n    syncOnStart: false\n",
		"memory:\r\n  search:\r\n    maxResults: 3\r\n",
		"memory:\n  compaction:\n    flushPrompt: \"   \"\n",
		"memory:\n  compaction:\n    flushPrompt: |\n      Flush now.\n      Ünïcödé 会议\n",
		"memory:\n\tsearch: {}\n",
		"memory:\n  compaction:\n    flushPrompt: |\n\n      Flush now.\n",
		"memory:\n  compaction:\n    flushPrompt: \"\\tFlush\\nnow.\"\n",
		"memory:\n  compaction:\n    flushPrompt: \"x\\n\"\n  embedding:\n    options:\n      p:\n        \"\\nk\": \"\\n\"\n",
		"{{{{",
		"&000:\n0:00: 0\n",
		"\"\": 1\n\"\": 2\n",
		"memory:\n  \"\":\n    a: 1\n    a: 2\n",
	} {
		f.Add([]byte(s))
	}
	known := keys()
	path := filepath.Join(f.TempDir(), FileName)
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := Default()
		err := Parse(bytes.NewReader(data), &cfg, path)
		var ce *Error
		if err != nil {
			if errors.As(err, &ce) {
				// An empty key ("": 1, or an anchor with no name after it)
				// is shown as "" (empty key), never as nothing.
				if msg := ce.Error(); ce.Source != path || ce.Line < 1 || strings.Contains(msg, ": : ") || strings.Contains(msg, ".: ") {
					t.Fatalf("Parse error %#v does not say where", ce)
				}
			} else if !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("Parse error %q does not name the file", err)
			}
		}
		var verr error
		if err == nil {
			verr = cfg.Validate()
			if verr != nil && (!errors.As(verr, &ce) || !known[ce.Key]) {
				t.Fatalf("Validate: %v does not name a key", verr)
			}
		}
		// Load is Parse then Validate (no environment given).
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		loaded, lerr := Load(path, nil)
		want := err
		if want == nil {
			want = verr
		}
		if errText(lerr) != errText(want) {
			t.Fatalf("Load: %v; Parse and Validate: %v", lerr, want)
		}
		if err != nil || verr != nil {
			return
		}
		if !equal(loaded, cfg) {
			t.Fatalf("Load gave %+v, Parse %+v", loaded, cfg)
		}
		checkRanges(t, cfg)
		// Written out as SetPlugin rewrites config.yaml (decoded to a
		// yaml.Node and encoded again), it parses back to itself.
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("Unmarshal of a config that parses: %v", err)
		}
		if len(doc.Content) == 0 {
			return // comments only: SetPlugin keeps the text as it is
		}
		var buf bytes.Buffer
		if err := encode(&buf, &doc); err != nil {
			t.Fatalf("encode: %v", err)
		}
		out := buf.Bytes()
		back := Default()
		if err := Parse(bytes.NewReader(out), &back, "marshalled"); err != nil {
			t.Fatalf("Parse(encode(file)): %v\n%s", err, out)
		}
		if !equal(back, cfg) {
			t.Fatalf("Parse(encode(file)) = %+v, want %+v\n%s", back, cfg, out)
		}
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// equal compares configs as values: a nil options map is the empty one.
func equal(a, b Config) bool {
	norm := func(c Config) Config {
		c = c.Clone()
		if len(c.Memory.Embedding.Options) == 0 {
			c.Memory.Embedding.Options = nil
		}
		for k, v := range c.Memory.Embedding.Options {
			if len(v) == 0 {
				c.Memory.Embedding.Options[k] = nil
			}
		}
		return c
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// checkRanges restates Validate's ranges in the positive: a value that
// slips through a check written "x < lo || x > hi" (NaN, an overflowing
// sum) is caught.
func checkRanges(t *testing.T, c Config) {
	t.Helper()
	s, m := c.Memory.Search, c.Memory.Compaction
	for name, ok := range map[string]bool{
		"minScore":        s.MinScore >= 0 && s.MinScore <= 1,
		"minSimilarity":   s.MinSimilarity >= -1 && s.MinSimilarity <= 1,
		"vectorWeight":    s.VectorWeight >= 0 && s.VectorWeight <= 10 && !math.IsInf(s.VectorWeight, 0),
		"minCacheHitRate": c.Health.MinCacheHitRate >= 0 && c.Health.MinCacheHitRate <= 1,
		"compaction": m.ContextWindow <= MaxTokens && m.KeepRecentTokens >= 0 && m.KeepRecentTokens <= MaxTokens &&
			m.ReserveTokens >= 0 && m.SoftThresholdTokens >= 0 && m.ReserveTokens < m.ContextWindow && m.SoftThresholdTokens < m.ContextWindow &&
			m.ReserveTokens+m.SoftThresholdTokens < m.ContextWindow,
		"maxTokens": c.Memory.Chunking.MaxTokens >= 16 && c.Memory.Chunking.MaxTokens <= MaxTokens,
	} {
		if !ok {
			t.Fatalf("a config with %s out of range validates: %+v", name, c.Memory)
		}
	}
}
