package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// result of one in-process run.
type result struct {
	stdout, stderr string
	code           int
}

// memhost runs the CLI in-process against home, with stdin when not nil.
func memhost(t *testing.T, home string, stdin *string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	io := cmdapp.Stdio{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "MEMHOST_HOME" {
			return home
		}
		return ""
	}}
	if stdin != nil {
		io.Stdin, io.StdinIsPiped = strings.NewReader(*stdin), true
	}
	code := run(context.Background(), append([]string{"memhost"}, args...), io)
	return result{out.String(), errb.String(), code}
}

// ok runs a command that must succeed.
func ok(t *testing.T, home string, args ...string) string {
	t.Helper()
	r := memhost(t, home, nil, args...)
	if r.code != 0 {
		t.Fatalf("memhost %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
	}
	return r.stdout
}

func decode[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON %q: %v", s, err)
	}
	return v
}

func TestTour(t *testing.T) {
	home := filepath.Join(t.TempDir(), "never-inited")
	// Every command works on a home that was never init-ed.
	if out := ok(t, home, "status"); !strings.Contains(out, "files:") {
		t.Errorf("status on a new home: %q", out)
	}
	out := ok(t, home, "init")
	if !strings.Contains(out, "created with every default") {
		t.Errorf("init: %q", out)
	}
	if out := ok(t, home, "init"); !strings.Contains(out, "kept as it was") {
		t.Errorf("second init: %q", out)
	}
	cfg, err := os.ReadFile(filepath.Join(home, "config.yaml"))
	if err != nil || !strings.Contains(string(cfg), "#     maxResults: 15") {
		t.Errorf("config.yaml: %v %q", err, cfg)
	}

	out = ok(t, home, "remember", "Sarah Chen - Phone: 555-1234")
	if out != "remembered in reference/contacts.md § Sarah Chen (new section, line 4)\n" {
		t.Errorf("remember: %q", out)
	}
	out = ok(t, home, "remember", "Sarah Chen - Phone: 555-1234")
	if out != "already remembered: reference/contacts.md § Sarah Chen (line 4); nothing written\n" {
		t.Errorf("duplicate remember: %q", out)
	}
	ok(t, home, "daily-log", "Called Sarah about the project timeline")
	ok(t, home, "write", "lists/shopping.md", "--section", "Groceries", "- oat milk")

	// Flags after the query, and --json after the command.
	rec := decode[recallJSON](t, ok(t, home, "recall", "sarah phone", "--json", "--max-results", "5"))
	if rec.Query != "sarah phone" || rec.Mode != "keyword" || rec.Reason == "" {
		t.Errorf("recall header: %+v", rec)
	}
	if len(rec.Results) != 2 || len(rec.Results["notebook"]) != 1 || len(rec.Results["daily"]) != 1 {
		t.Fatalf("recall groups: %+v", rec.Results)
	}
	nb := rec.Results["notebook"][0]
	if nb.Path != "reference/contacts.md" || nb.Heading != "## Sarah Chen" || nb.Score != 1 || nb.Lines.Start != 3 || nb.Lines.End != 4 || !strings.Contains(nb.Snippet, "555-1234") {
		t.Errorf("notebook result: %+v", nb)
	}
	if d := rec.Results["daily"][0]; d.Score <= 0 || d.Score > 1 || !strings.HasPrefix(d.Path, "daily/") {
		t.Errorf("daily result: %+v", d)
	}
	if _, ok := rec.Timing["totalMs"]; !ok {
		t.Errorf("timing: %v", rec.Timing)
	}

	human := ok(t, home, "recall", "sarah")
	if !strings.Contains(human, "NOTEBOOK (1)\n  reference/contacts.md:3-4  ## Sarah Chen  1.00\n") || !strings.Contains(human, "DAILY (1)") {
		t.Errorf("recall text:\n%s", human)
	}
	if got := ok(t, home, "get", "lists/shopping.md"); got != "# Shopping\n\n## Groceries\n- oat milk\n" &&
		got != "\n## Groceries\n- oat milk\n" && got != "## Groceries\n- oat milk\n" {
		t.Errorf("get: %q", got)
	}
	if got := ok(t, home, "get", "reference/contacts.md", "--start-line", "3", "--lines", "1"); got != "## Sarah Chen\n" {
		t.Errorf("get range: %q", got)
	}
	if got := ok(t, home, "context"); !strings.Contains(got, "### reference/contacts.md") || !strings.Contains(got, "(today)") {
		t.Errorf("context:\n%s", got)
	}
	st := decode[map[string]any](t, ok(t, home, "status", "--json"))
	for _, k := range []string{"files", "chunks", "lastSync", "dbSizeBytes", "mode", "reason"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status --json lacks %q: %v", k, st)
		}
	}
	files := decode[struct {
		Files []struct {
			Path   string `json:"path"`
			Hash   string `json:"hash"`
			Chunks int    `json:"chunks"`
			Stale  bool   `json:"stale"`
		} `json:"files"`
	}](t, ok(t, home, "files", "--json"))
	if len(files.Files) != 3 {
		t.Errorf("files: %+v", files)
	}
	for _, f := range files.Files {
		if len(f.Hash) != 64 || f.Chunks == 0 || f.Stale {
			t.Errorf("file %+v", f)
		}
	}
	// An edit behind memhost's back shows as stale, then sync indexes it.
	os.WriteFile(filepath.Join(home, "notebook", "knowledge", "editor.md"), []byte("# Edited\nfound by the editor\n"), 0o644)
	if out := ok(t, home, "files"); !regexp.MustCompile(`(?m)^knowledge/editor\.md +0 +new \(stale\)`).MatchString(out) {
		t.Errorf("files with a stale page:\n%s", out)
	}
	if out := ok(t, home, "sync"); !strings.Contains(out, "1 indexed") {
		t.Errorf("sync: %q", out)
	}
	if out := ok(t, home, "rebuild"); !strings.Contains(out, "rebuilt: 4 pages scanned, 4 indexed") {
		t.Errorf("rebuild: %q", out)
	}
	ok(t, home, "rm", "knowledge/editor.md")
	if r := memhost(t, home, nil, "get", "knowledge/editor.md"); r.code == 0 || r.stderr != "memhost: no such page: knowledge/editor.md\n" {
		t.Errorf("get after rm: %+v", r)
	}
}

// recallJSON is the documented shape of recall --json.
type recallJSON struct {
	Query   string `json:"query"`
	Mode    string `json:"mode"`
	Reason  string `json:"reason"`
	Results map[string][]struct {
		Path    string  `json:"path"`
		Heading string  `json:"heading"`
		Snippet string  `json:"snippet"`
		Score   float64 `json:"score"`
		Lines   struct {
			Start int `json:"start"`
			End   int `json:"end"`
		} `json:"lines"`
	} `json:"results"`
	Timing map[string]float64 `json:"timing"`
}

func TestStdinText(t *testing.T) {
	home := t.TempDir()
	text := "Line one of a note\nline two\n"
	r := memhost(t, home, &text, "remember", "--category", "knowledge", "-")
	if r.code != 0 {
		t.Fatalf("remember -: %+v", r)
	}
	r = memhost(t, home, &text, "daily-log")
	if r.code != 0 {
		t.Fatalf("daily-log from piped stdin: %+v", r)
	}
	page := ok(t, home, "get", "knowledge/facts.md")
	if !strings.Contains(page, "Line one of a note\nline two\n") {
		t.Errorf("facts.md = %q", page)
	}
	heredoc := "# Plan\n\n## Goals\n- ship it\n"
	if r := memhost(t, home, &heredoc, "write", "projects/plan.md", "-"); r.code != 0 {
		t.Fatalf("write -: %+v", r)
	}
	if got := ok(t, home, "get", "projects/plan.md"); got != heredoc {
		t.Errorf("plan.md = %q", got)
	}
}

// snapshot hashes every file of the notebook, to prove bad input changed
// nothing.
func snapshot(t *testing.T, home string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	root := filepath.Join(home, "notebook")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = sha256.Sum256(b)
		}
		return nil
	})
	return out
}

func TestBadInput(t *testing.T) {
	home := t.TempDir()
	ok(t, home, "remember", "Sarah Chen - Phone: 555-1234")
	empty := ""
	tests := []struct {
		args  []string
		stdin *string
		code  int
		want  string // in the one line on stderr
	}{
		{[]string{"get", "../x"}, nil, 1, "../x is outside the notebook"},
		{[]string{"get", "/etc/passwd"}, nil, 1, "/etc/passwd is outside the notebook"},
		{[]string{"write", "../../evil.md", "x"}, nil, 1, "../../evil.md is outside the notebook"},
		{[]string{"rm", "lists/../../x.md"}, nil, 1, "outside the notebook"},
		{[]string{"get", "nope.md"}, nil, 1, "no such page: nope.md"},
		{[]string{"rm", "nope.md"}, nil, 1, "no such page: nope.md"},
		{[]string{"remember", ""}, nil, 1, "the text is empty"},
		{[]string{"remember", "-"}, &empty, 1, "the text is empty"},
		{[]string{"remember"}, nil, 2, "missing TEXT"},
		{[]string{"daily-log", "   "}, nil, 1, "the text is empty"},
		{[]string{"write", "notes.txt", "x"}, nil, 1, "notes.txt"},
		{[]string{"write", "reference/contacts.md"}, nil, 2, "missing TEXT"},
		{[]string{"remember", "--category", "diary", "x"}, nil, 2, `unknown category "diary"`},
		{[]string{"recall"}, nil, 2, "missing QUERY"},
		{[]string{"recall", "?!"}, nil, 1, "no searchable words"},
		{[]string{"recall", "x", "--max-results", "0"}, nil, 2, "--max-results must be at least 1"},
		{[]string{"recall", "x", "--min-score", "3"}, nil, 2, "--min-score must be between 0 and 1"},
		{[]string{"recall", "x", "--sources", "web"}, nil, 2, `unknown source "web"`},
		{[]string{"recall", "x", "--max-results", "many"}, nil, 2, "many"},
		{[]string{"get", "reference/contacts.md", "--start-line", "99"}, nil, 1, "start line 99 is past the end of reference/contacts.md"},
		{[]string{"get", "reference/contacts.md", "--lines", "-1"}, nil, 2, "must be positive"},
		{[]string{"frobnicate"}, nil, 2, `unknown command "frobnicate" (run memhost help for the list)`},
		{[]string{"recal", "foo"}, nil, 2, `unknown command "recal" — did you mean "recall"?`},
		{[]string{"reacll", "foo"}, nil, 2, `unknown command "reacll" — did you mean "recall"?`},
		{[]string{"session", "lst"}, nil, 2, `unknown command "session lst" — did you mean "session list"?`},
		{[]string{"models", "frobnicate"}, nil, 2, `unknown command "models frobnicate" (run memhost models --help for the list)`},
		{[]string{"status", "extra"}, nil, 2, "status takes no arguments"},
		{[]string{"remember", "--nope", "x"}, nil, 2, "nope"},
		{[]string{"write", "notes/evil\n## Injected", "x"}, nil, 1, `control character: "notes/evil\n## Injected"`},
		{[]string{"get", "a\tb.md"}, nil, 1, `control character: "a\tb.md"`},
		{[]string{"remember", "--file", "a\nb", "x"}, nil, 2, `page name "a\nb"`},
		{[]string{"remember", "--section", "Evil\n## Injected", "x"}, nil, 2, `section "Evil\n## Injected": it holds a line break`},
		{[]string{"write", "reference/contacts.md", "--section", "##", "--replace", "x"}, nil, 2, `section "##" names no heading`},
		{[]string{"write", "knowledge/", "x"}, nil, 1, "it names a folder, not a page (give a page such as knowledge/notes.md): knowledge/"},
		{[]string{"write", "notes/.drafts/y.md", "x"}, nil, 1, "hidden files and folders are not indexed: notes/.drafts/y.md"},
	}
	before := snapshot(t, home)
	for _, tt := range tests {
		r := memhost(t, home, tt.stdin, tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("memhost %q: exit %d, stderr %q, stdout %q; want exit %d and one line with %q", tt.args, r.code, r.stderr, r.stdout, tt.code, tt.want)
		}
	}
	if after := snapshot(t, home); !reflect.DeepEqual(before, after) {
		t.Error("bad input changed the notebook")
	}
}

func TestBadConfig(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("memory:\n  search:\n    maxResult: 3\n"), 0o644)
	r := memhost(t, home, nil, "status")
	if r.code != 1 || r.stderr != "memhost: "+filepath.Join(home, "config.yaml")+" line 3: memory.search.maxResult: unknown key\n" {
		t.Errorf("unknown key: %+v", r)
	}
	os.WriteFile(filepath.Join(home, "config.yaml"), []byte("memory:\n  search:\n    maxResults: lots\n"), 0o644)
	r = memhost(t, home, nil, "init")
	if r.code != 1 || !strings.Contains(r.stderr, `memory.search.maxResults: expected an integer, got "lots"`) {
		t.Errorf("ill-typed key: %+v", r)
	}
}

func TestHomeIsAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, []byte("x"), 0o644)
	if r := memhost(t, f, nil, "status"); r.code != 1 || !strings.Contains(r.stderr, "is a file, not a folder") {
		t.Errorf("home is a file: %+v", r)
	}
}

func TestRecallSourcesAndLimits(t *testing.T) {
	home := t.TempDir()
	for i := range 8 {
		ok(t, home, "remember", "--category", "knowledge", "--file", fmt.Sprintf("page%d", i), fmt.Sprintf("lantern note %d", i))
	}
	ok(t, home, "daily-log", "lit a lantern")
	type resp struct {
		Results map[string][]map[string]any `json:"results"`
	}
	r := decode[resp](t, ok(t, home, "--json", "recall", "lantern", "--max-results", "3"))
	if n := len(r.Results["notebook"]) + len(r.Results["daily"]); n != 3 {
		t.Errorf("--max-results 3 gave %d results", n)
	}
	r = decode[resp](t, ok(t, home, "--json", "recall", "lantern", "--sources", "daily"))
	if len(r.Results["notebook"]) != 0 || len(r.Results["daily"]) != 1 {
		t.Errorf("--sources daily: %v", r.Results)
	}
	text := ok(t, home, "recall", "lantern", "--sources", "daily")
	if strings.Contains(text, "NOTEBOOK") {
		t.Errorf("text output shows an unrequested group:\n%s", text)
	}
	var names []string
	for k := range r.Results {
		names = append(names, k)
	}
	sort.Strings(names)
	if !reflect.DeepEqual(names, []string{"daily", "notebook"}) {
		t.Errorf("groups: %v", names)
	}
}

// TestMisspeltEnvWarns: a MEMHOST_ variable memhost does not read gets one
// warning line on stderr, however often the command reads its settings,
// and the command still runs.
func TestMisspeltEnvWarns(t *testing.T) {
	envChecked = sync.Once{} // as in a new process
	home := t.TempDir()
	env := map[string]string{
		"MEMHOST_HOME":                     home,
		"MEMHOST_HOEM":                     "/elsewhere",
		"MEMHOST_MEMORY_SEARCH_MAXRESULTS": "3",
	}
	var out, errb bytes.Buffer
	io := cmdapp.Stdio{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
		Environ: func() []string {
			var kv []string
			for k, v := range env {
				kv = append(kv, k+"="+v)
			}
			return kv
		}}
	ctx := context.Background()
	if code := run(ctx, []string{"memhost", "remember", "kiwis are green"}, io); code != 0 {
		t.Fatalf("remember: exit %d, stderr %q", code, errb.String())
	}
	if code := run(ctx, []string{"memhost", "recall", "kiwis"}, io); code != 0 {
		t.Fatalf("recall: exit %d, stderr %q", code, errb.String())
	}
	want := "memhost: warning: MEMHOST_HOEM is not a memhost variable and is ignored (did you mean MEMHOST_HOME?)\n"
	if got := errb.String(); got != want {
		t.Fatalf("stderr = %q, want %q once", got, want)
	}
	if !strings.Contains(out.String(), "kiwis are green") {
		t.Fatalf("recall found nothing:\n%s", out.String())
	}
}

// readSpy is a stdin that records whether it was read.
type readSpy struct{ read bool }

func (r *readSpy) Read([]byte) (int, error) { r.read = true; return 0, io.EOF }

// TestHookUnknownEvent: a hook memhost does not know is named, with the
// known ones, as a usage error before stdin is read (a runtime may keep
// it open).
func TestHookUnknownEvent(t *testing.T) {
	home := t.TempDir()
	var out, errb bytes.Buffer
	spy := &readSpy{}
	code := run(context.Background(), []string{"memhost", "hook", "nonsense"}, cmdapp.Stdio{Stdin: spy, StdinIsPiped: true, Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == "MEMHOST_HOME" {
				return home
			}
			return ""
		}})
	want := "memhost: unknown hook \"nonsense\" (known: session-start, prompt, pre-compact, session-end, stop)\n"
	// Exit 1: Claude Code takes 2 as "block the agent".
	if code != 1 || errb.String() != want || out.String() != "" || spy.read {
		t.Fatalf("exit %d, stderr %q, stdout %q, stdin read %v; want exit 1, %q, stdin unread", code, errb.String(), out.String(), spy.read, want)
	}
}
