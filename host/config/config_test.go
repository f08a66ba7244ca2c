package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestMissingFileMeansDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(filepath.Join(t.TempDir(), "config.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Errorf("Load of a missing file = %+v, want defaults", cfg)
	}
}

// TestTemplateShowsEveryDefault: the commented template parses to the
// defaults, and uncommenting every line of it gives the defaults too, so
// the file shows every key with its true default.
func TestTemplateShowsEveryDefault(t *testing.T) {
	t.Parallel()
	cfg := Default()
	if err := Parse(strings.NewReader(Template), &cfg, "template"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg, Default()) {
		t.Fatalf("commented template changed the config: %+v", cfg)
	}
	// Uncomment "# key: value" lines (keep prose comments out).
	keyLine := regexp.MustCompile(`^# ( *)([a-zA-Z]+:.*)$`)
	var lines []string
	for _, l := range strings.Split(Template, "\n") {
		if m := keyLine.FindStringSubmatch(l); m != nil {
			lines = append(lines, m[1]+m[2])
		}
	}
	uncommented := strings.Join(lines, "\n")
	var zero Config
	if err := Parse(strings.NewReader(uncommented), &zero, "uncommented"); err != nil {
		t.Fatalf("uncommented template: %v\n%s", err, uncommented)
	}
	if !reflect.DeepEqual(zero, Default()) {
		t.Errorf("uncommented template = %+v\nwant defaults %+v\n%s", zero, Default(), uncommented)
	}
}

func TestErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		want string
	}{
		{"memory:\n  serch:\n    maxResults: 3\n", "config.yaml line 2: memory.serch: unknown key"},
		{"memory:\n  search:\n    maxresults: 3\n", "memory.search.maxresults: unknown key (did you mean maxResults?)"},
		{"memory:\n  search:\n    maxResults: many\n", `config.yaml line 3: memory.search.maxResults: expected an integer, got "many"`},
		{"memory:\n  search:\n    minScore: 2\n", "memory.search.minScore: must be between 0 and 1, got 2"},
		{"memory:\n  search:\n    fusion: borda\n", `memory.search.fusion: must be linear or rrf, got "borda"`},
		{"memory:\n  sync:\n    syncOnStart: sometimes\n", `memory.sync.syncOnStart: expected true or false, got "sometimes"`},
		{"memory: 5\n", "memory: expected a mapping of keys"},
		{"timezone: Mars/Olympus\n", `timezone: unknown time zone "Mars/Olympus"`},
		{"memory:\n  chunking:\n    maxTokens: 100\n    overlapTokens: 100\n", "memory.chunking.overlapTokens: must be between 0 and maxTokens-1 (99), got 100"},
		{"memory: [unclosed\n", "config.yaml"},
		// NaN and infinities slip through a check written "x < lo || x > hi".
		{"memory:\n  search:\n    minScore: .nan\n", "memory.search.minScore: must be a number, got NaN"},
		{"memory:\n  search:\n    minSimilarity: .NaN\n", "memory.search.minSimilarity: must be a number, got NaN"},
		{"memory:\n  search:\n    vectorWeight: .inf\n", "memory.search.vectorWeight: must be a finite number, got +Inf"},
		{"health:\n  minCacheHitRate: -.inf\n", "health.minCacheHitRate: must be a finite number, got -Inf"},
		{"health:\n  everyMin: -1\n", "health.everyMin: must not be negative, got -1"},
		{"health:\n  keepDays: 0\n", "health.keepDays: must be at least 1, got 0"},
		{"health:\n  alerts:\n    webhook: ftp://x\n", `health.alerts.webhook: want an http or https URL, got "ftp://x"`},
		{"health:\n  alerts:\n    command: [\"\"]\n", "health.alerts.command: want a program"},
		{"health:\n  alerts:\n    timeoutMs: 0\n", "health.alerts.timeoutMs: must be at least 1, got 0"},
		// A sum of two huge token counts overflows and looks small.
		{"memory:\n  compaction:\n    reserveTokens: 9223372036854775807\n    softThresholdTokens: 1\n", "memory.compaction.reserveTokens: must be between 0 and 1073741824, got 9223372036854775807"},
		{"memory:\n  compaction:\n    softThresholdTokens: -1\n", "memory.compaction.softThresholdTokens: must be between 0 and 1073741824, got -1"},
		{"memory:\n  compaction:\n    keepRecentTokens: 1073741825\n", "memory.compaction.keepRecentTokens: must be between 0 and 1073741824, got 1073741825"},
		{"memory:\n  compaction:\n    contextWindow: 1073741825\n", "memory.compaction.contextWindow: must be between 1000 and 1073741824, got 1073741825"},
		{"memory:\n  chunking:\n    maxTokens: 1073741825\n", "memory.chunking.maxTokens: must be between 16 and 1073741824, got 1073741825"},
		// An empty key (an anchor with no name after it) is named as one.
		{"&000:\n0:00: 0\n", `config.yaml line 1: "" (empty key): unknown key`},
		{"memory:\n  \"\": 1\n", `config.yaml line 2: memory."" (empty key): unknown key`},
		{"\"\": 1\n\"\": 2\n", `config.yaml line 2: "" (empty key): duplicate key (first on line 1)`},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%q) error = %v, want it to contain %q", tt.yaml, err, tt.want)
		}
	}
}

func TestEnvOverrides(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte("memory:\n  search:\n    maxResults: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"MEMHOST_MEMORY_SEARCH_MAXRESULTS": "20",
		"MEMHOST_TIMEZONE":                 "Asia/Tokyo",
		"MEMHOST_MEMORY_SYNC_SYNCONSEARCH": "false",
	}
	cfg, err := Load(path, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Memory.Search.MaxResults != 20 || cfg.Timezone != "Asia/Tokyo" || cfg.Memory.Sync.SyncOnSearch {
		t.Errorf("env not applied: %+v", cfg)
	}
	env = map[string]string{"MEMHOST_MEMORY_SEARCH_MINSCORE": "high"}
	_, err = Load(path, func(k string) string { return env[k] })
	var ce *Error
	if !errors.As(err, &ce) || ce.Source != "MEMHOST_MEMORY_SEARCH_MINSCORE" {
		t.Errorf("bad env value: err = %v, want one naming the variable", err)
	}
}

func TestEmptyFile(t *testing.T) {
	t.Parallel()
	for _, content := range []string{"", "# only comments\n", "memory:\n"} {
		cfg := Default()
		if err := Parse(strings.NewReader(content), &cfg, "c"); err != nil {
			t.Errorf("Parse(%q): %v", content, err)
		}
		if !reflect.DeepEqual(cfg, Default()) {
			t.Errorf("Parse(%q) changed the defaults", content)
		}
	}
}

func TestSetPlugin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	// From the template (only comments).
	if err := os.WriteFile(path, []byte(Template), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SetPlugin(path, "hello", map[string]string{"dimensions": "64"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Memory.Embedding.Plugin != "hello" || cfg.Memory.Embedding.Options["hello"]["dimensions"] != "64" {
		t.Errorf("after SetPlugin: %+v", cfg.Memory.Embedding)
	}
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), "#     maxResults: 15") {
		t.Errorf("template comments lost:\n%s", b)
	}
	// A file with settings of its own: they stay, other plugins' options stay.
	os.WriteFile(path, []byte("# mine\ntimezone: UTC # keep\nmemory:\n  search:\n    maxResults: 7\n  embedding:\n    plugin: other\n    options:\n      other:\n        url: http://x\n"), 0o644)
	if err := SetPlugin(path, "hello", map[string]string{"dimensions": "32"}); err != nil {
		t.Fatal(err)
	}
	cfg, err = Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Timezone != "UTC" || cfg.Memory.Search.MaxResults != 7 || cfg.Memory.Embedding.Options["other"]["url"] != "http://x" ||
		cfg.Memory.Embedding.Plugin != "hello" || cfg.Memory.Embedding.Options["hello"]["dimensions"] != "32" {
		t.Errorf("settings lost: %+v", cfg)
	}
	b, _ = os.ReadFile(path)
	if !strings.Contains(string(b), "# mine") || !strings.Contains(string(b), "# keep") {
		t.Errorf("comments lost:\n%s", b)
	}
	// Removing an option; a broken file is left alone.
	if err := SetPlugin(path, "hello", map[string]string{"dimensions": ""}); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := Load(path, nil); len(cfg.Memory.Embedding.Options["hello"]) != 0 {
		t.Errorf("option not removed: %v", cfg.Memory.Embedding.Options)
	}
	os.WriteFile(path, []byte("memory: [broken\n"), 0o644)
	if err := SetPlugin(path, "hello", nil); err == nil {
		t.Error("SetPlugin on a broken file succeeded")
	}
	if b, _ := os.ReadFile(path); string(b) != "memory: [broken\n" {
		t.Error("broken file was changed")
	}
}

// TestSetPluginKeepsStrings: rewriting the file keeps every string as it
// was, also those yaml.v3 writes back wrong as block scalars: a leading
// blank line (go-yaml/yaml#888), a leading tab, a lone line break.
func TestSetPluginKeepsStrings(t *testing.T) {
	t.Parallel()
	for _, prompt := range []string{"\nFlush now.\n", "\n\nFlush\nnow.", "\tFlush\nnow.\n", "  Flush\n  now.\n", "Flush now.\n\n", "Flush\r\nnow.\n"} {
		path := filepath.Join(t.TempDir(), "config.yaml")
		data := []byte(fmt.Sprintf("memory:\n  compaction:\n    flushPrompt: %q\n", prompt))
		// Written by hand as a block scalar, as a person would.
		if strings.HasPrefix(prompt, "\n") && !strings.Contains(prompt, "\r") {
			data = []byte("memory:\n  compaction:\n    flushPrompt: |" + keep(prompt) + "\n      " + strings.ReplaceAll(strings.TrimSuffix(prompt, "\n"), "\n", "\n      ") + "\n")
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if before, err := Load(path, nil); err != nil || before.Memory.Compaction.FlushPrompt != prompt {
			t.Fatalf("the test's file %q gives %q, %v", data, before.Memory.Compaction.FlushPrompt, err)
		}
		if err := SetPlugin(path, "hello", nil); err != nil {
			t.Fatal(err)
		}
		after, err := Load(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := after.Memory.Compaction.FlushPrompt; got != prompt {
			b, _ := os.ReadFile(path)
			t.Fatalf("flushPrompt %q became %q:\n%s", prompt, got, b)
		}
	}
}

// keep is the chomping indicator of a block scalar holding s.
func keep(s string) string {
	if !strings.HasSuffix(s, "\n") {
		return "-"
	}
	return ""
}

// TestFoldersStayInside: a folder relative to the home or the notebook
// must not climb out of it with "..". The home's folders may be absolute
// (a notebook kept in another place); the reference folder may not, since
// context reads only the notebook.
func TestFoldersStayInside(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		want string // "" for no error
	}{
		{"memory:\n  notebookDir: /srv/vault\n", ""},
		{"memory:\n  notebookDir: notes/../vault\n", ""},
		{"memory:\n  notebookDir: ../../vault\n", `memory.notebookDir: a relative folder must stay inside the home, got "../../vault" (give an absolute path for a folder elsewhere)`},
		{"memory:\n  database: /var/lib/memhost/memory.db\n", ""},
		{"memory:\n  database: brain/../../memory.db\n", `memory.database: a relative file must stay inside the home, got "brain/../../memory.db" (give an absolute path for a file elsewhere)`},
		{"memory:\n  embedding:\n    modelsDir: /opt/models\n", ""},
		{"memory:\n  embedding:\n    modelsDir: ..\n", `memory.embedding.modelsDir: a relative folder must stay inside the home, got ".." (give an absolute path for a folder elsewhere)`},
		{"memory:\n  prompt:\n    referenceDir: knowledge/people\n", ""},
		{"memory:\n  prompt:\n    referenceDir: ../..\n", `memory.prompt.referenceDir: must be a folder inside the notebook, got "../.."`},
		{"memory:\n  prompt:\n    referenceDir: reference/../../x\n", `memory.prompt.referenceDir: must be a folder inside the notebook, got "reference/../../x"`},
		{"memory:\n  prompt:\n    referenceDir: /etc\n", `memory.prompt.referenceDir: must be a folder inside the notebook, got "/etc"`},
		{"memory:\n  episodes:\n    folder: journal/chats\n", ""},
		{"memory:\n  episodes:\n    folder: ../episodes\n", `memory.episodes.folder: must be a folder inside the notebook, got "../episodes"`},
		{"memory:\n  episodes:\n    folder: \"\"\n", `memory.episodes.folder: must be a folder inside the notebook, got ""`},
		{"memory:\n  episodes:\n    everyMin: -1\n", `memory.episodes.everyMin: must not be negative`},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, nil)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tt.want == "" && err != nil || tt.want != "" && !strings.HasSuffix(got, tt.want) {
			t.Fatalf("Load(%q) error = %q, want %q", tt.yaml, got, tt.want)
		}
	}
	// From the environment too: the variable is named.
	env := map[string]string{"MEMHOST_MEMORY_PROMPT_REFERENCEDIR": "../.."}
	_, err := Load(filepath.Join(t.TempDir(), "config.yaml"), func(k string) string { return env[k] })
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "memory.prompt.referenceDir" {
		t.Fatalf("referenceDir from env: err = %v, want one naming memory.prompt.referenceDir", err)
	}
}

// TestDuplicateKeys: a key given twice is refused, naming the file, the
// line of the second and the key, instead of the later one silently
// winning.
func TestDuplicateKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		yaml string
		want string
	}{
		{"memory:\n  search:\n    maxResults: 3\n    maxResults: 5\n", "config.yaml line 4: memory.search.maxResults: duplicate key (first on line 3)"},
		{"memory:\n  search:\n    maxResults: 3\nmemory:\n  sync:\n    syncOnStart: false\n", "config.yaml line 4: memory: duplicate key (first on line 1)"},
		{"timezone: UTC\ntimezone: Asia/Tokyo\n", "config.yaml line 2: timezone: duplicate key (first on line 1)"},
		{"memory:\n  embedding:\n    options:\n      ollama: {url: a}\n      ollama: {url: b}\n", "config.yaml line 5: memory.embedding.options.ollama: duplicate key (first on line 4)"},
		{"memory:\n  embedding:\n    options:\n      ollama:\n        url: a\n        url: b\n", "config.yaml line 6: memory.embedding.options.ollama.url: duplicate key (first on line 5)"},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(tt.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, nil)
		if err == nil || !strings.HasSuffix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("Load(%q) error = %v, want one line ending in %q", tt.yaml, err, tt.want)
		}
	}
}

// TestUnknownEnv: a MEMHOST_ variable memhost does not read is named, with
// the known one closest to it; known ones and other variables pass.
func TestUnknownEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		environ []string
		want    []string
	}{
		{[]string{"HOME=/home/u", "MEMHOST_HOME=/x", "MEMHOST_MEMORY_SEARCH_MAXRESULTS=3", "MEMHOST_NO_SERVER=1", "MEMHOST_TIMEZONE=UTC"}, nil},
		{[]string{"MEMHOST_HOEM=/x"}, []string{"MEMHOST_HOEM is not a memhost variable and is ignored (did you mean MEMHOST_HOME?)"}},
		{[]string{"MEMHOST_MEMORY_SEARCH_MAXRESULT=3", "PATH=/bin"}, []string{"MEMHOST_MEMORY_SEARCH_MAXRESULT is not a memhost variable and is ignored (did you mean MEMHOST_MEMORY_SEARCH_MAXRESULTS?)"}},
		{[]string{"MEMHOST_memory_search_maxResults=3"}, []string{"MEMHOST_memory_search_maxResults is not a memhost variable and is ignored (did you mean MEMHOST_MEMORY_SEARCH_MAXRESULTS?)"}},
		{[]string{"MEMHOST_ZZ=1", "MEMHOST_NOSERVER=1"}, []string{
			"MEMHOST_NOSERVER is not a memhost variable and is ignored (did you mean MEMHOST_NO_SERVER?)",
			"MEMHOST_ZZ is not a memhost variable and is ignored (did you mean MEMHOST_HOME?)",
		}},
	}
	for _, tt := range tests {
		if got := UnknownEnv(tt.environ); !reflect.DeepEqual(got, tt.want) {
			t.Fatalf("UnknownEnv(%q) = %q, want %q", tt.environ, got, tt.want)
		}
	}
	for _, name := range EnvNames() {
		if got := UnknownEnv([]string{name + "=1"}); got != nil {
			t.Fatalf("UnknownEnv of the known %s = %q", name, got)
		}
	}
}
