package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost/internal/fakeollama"
	"github.com/memhost/memhost/internal/syncbuf"
	"github.com/memhost/memhost/internal/testbin"
	"github.com/memhost/memhost/modelstore"
)

// binary is the memhost executable built for these tests.
var binary string

func TestMain(m *testing.M) {
	// The binaries run here start no server on demand (server.autostart)
	// but where a test asks for one: a test's home is gone when it ends,
	// and a server left in it would serve nothing for an hour.
	os.Setenv("MEMHOST_SERVER_AUTOSTART", "false")
	dir, err := os.MkdirTemp("", "memhost-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// binary is the launcher users run; memhost-core beside it.
	binary = filepath.Join(dir, "memhost")
	// The hello plugin goes beside memhost, where built-in plugins live.
	// Built once (internal/testbin) and copied here: memhost finds
	// memhost-core and the plugins beside itself.
	for _, b := range []struct {
		out, pkg, tags string
		env            []string
	}{
		{"memhost-core", ".", "sqlite_fts5", nil},
		{"memhost", "../memhost", "", []string{"CGO_ENABLED=0"}}, // as make builds it
		{"memhost-embeddings-hello", "../../examples/embeddings-hello", "", nil},
		{"memhost-embeddings-ollama", "../../plugins/embeddings-ollama", "", nil},
	} {
		bin, err := testbin.BuildEnv(b.pkg, b.tags, b.env)
		if err == nil {
			err = testbin.Copy(bin, filepath.Join(dir, b.out))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "building:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// exe runs the binary with home and extra environment.
func exe(home string, stdin string, env []string, args ...string) (string, string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "MEMHOST_HOME="+home)
	cmd.Env = append(cmd.Env, env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

func TestBinaryPipedStdin(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	out, errOut, err := exe(home, "Kettle descaling: every second Sunday\n", nil, "remember", "--category", "knowledge")
	if err != nil {
		t.Fatalf("remember from a pipe: %v %s", err, errOut)
	}
	if !strings.HasPrefix(out, "remembered in knowledge/facts.md") {
		t.Errorf("remember: %q", out)
	}
	out, _, err = exe(home, "", nil, "recall", "descaling", "--json")
	if err != nil || !strings.Contains(out, `"path": "knowledge/facts.md"`) {
		t.Errorf("recall: %v %s", err, out)
	}
	_, errOut, err = exe(home, "", nil, "get", "../secret")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || strings.Count(errOut, "\n") != 1 {
		t.Errorf("bad path through the binary: %v %q", err, errOut)
	}
}

// TestBinaryConcurrentWriters: memhost watch runs while several processes
// remember and recall at once. Every command succeeds, no "database is
// locked" reaches anyone, and every fact is on its page and found.
func TestBinaryConcurrentWriters(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, errOut, err := exe(home, "", nil, "init"); err != nil {
		t.Fatalf("init: %v %s", err, errOut)
	}
	watch := exec.Command(binary, "watch")
	watch.Env = append(os.Environ(), "MEMHOST_HOME="+home, "MEMHOST_MEMORY_SYNC_WATCHDEBOUNCEMS=50")
	stdout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var watchErr bytes.Buffer
	watch.Stderr = &watchErr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	var watchLog strings.Builder
	logDone := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			watchLog.WriteString(sc.Text() + "\n")
		}
		close(logDone)
	}()

	const writers, each = 3, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				args := [][]string{
					{"remember", "--category", "knowledge", "--file", "shared", fmt.Sprintf("concurrent fact w%dn%d", w, i)},
					{"recall", "concurrent"},
				}
				for _, a := range args {
					// The recalls do not sync: the editor's pages are the
					// watcher's to index (and to log), or a recall could
					// index them first and leave the watcher nothing to say.
					var env []string
					if a[0] == "recall" {
						env = []string{"MEMHOST_MEMORY_SYNC_SYNCONSEARCH=false"}
					}
					_, errOut, err := exe(home, "", env, a...)
					if err != nil || errOut != "" {
						mu.Lock()
						failures = append(failures, fmt.Sprintf("%v: %v %s", a, err, errOut))
						mu.Unlock()
					}
				}
			}
		}()
	}
	// Meanwhile an editor writes pages behind memhost's back, for watch.
	for i := range 5 {
		os.WriteFile(filepath.Join(home, "notebook", "knowledge", fmt.Sprintf("editor%d.md", i)), []byte(fmt.Sprintf("# Editor\nhandwritten note %d\n", i)), 0o644)
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}

	page, err := os.ReadFile(filepath.Join(home, "notebook", "knowledge", "shared.md"))
	if err != nil {
		t.Fatal(err)
	}
	for w := range writers {
		for i := range each {
			fact := fmt.Sprintf("concurrent fact w%dn%d", w, i)
			if !strings.Contains(string(page), "- "+fact+"\n") {
				t.Errorf("lost %q", fact)
			}
		}
	}
	// The watcher indexes the editor's pages without anyone searching.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _, err := exe(home, "", []string{"MEMHOST_MEMORY_SYNC_SYNCONSEARCH=false"}, "recall", "handwritten", "--json", "--max-results", "10")
		if err == nil && strings.Count(out, `"path": "knowledge/editor`) == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch did not index the editor's pages: %s\nwatch log:\n%s", out, watchLog.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	watch.Process.Signal(syscall.SIGINT)
	if err := watch.Wait(); err != nil {
		t.Errorf("watch exited with %v: %s", err, watchErr.String())
	}
	<-logDone
	if !strings.Contains(watchLog.String(), "knowledge/editor") {
		t.Errorf("watch did not log what it indexed:\n%s", watchLog.String())
	}
	if strings.Contains(watchErr.String(), "locked") {
		t.Errorf("watch stderr: %s", watchErr.String())
	}
}

// TestBinaryPlugins: choose the hello plugin, let the background embedder
// finish, recall in hybrid mode; then break the plugin and recall still
// answers, keyword-only with the reason.
//
// Not parallel: it replaces the hello plugin that every test runs (a
// running binary cannot be written: ETXTBSY).
func TestBinaryPlugins(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "notebook", "reference"), 0o755)
	os.WriteFile(filepath.Join(home, "notebook", "reference", "contacts.md"), []byte("# Contacts\n\n## Sarah Chen\n- Mobile: 555-1234\n"), 0o644)
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	os.WriteFile(filepath.Join(home, "plugins", "memhost-embeddings-fake"), []byte("#!/bin/sh\necho I am not a plugin\n"), 0o755)

	out, errOut, err := exe(home, "", nil, "plugins", "list", "--json")
	if err != nil {
		t.Fatalf("plugins list: %v %s", err, errOut)
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 {
		t.Fatalf("plugins list --json = %s (%v)", out, err)
	}
	for _, k := range []string{"name", "path", "sha256", "version", "model", "dimensions", "status"} {
		if _, ok := list[0][k]; !ok {
			t.Errorf("plugins list --json lacks %q: %v", k, list[0])
		}
	}
	if !strings.Contains(errOut, "memhost-embeddings-fake") {
		t.Errorf("the non-plugin was not warned about: %q", errOut)
	}

	cfgBefore, _ := os.ReadFile(filepath.Join(home, "config.yaml"))
	_, errOut, err = exe(home, "", nil, "plugins", "use", "olama")
	if err == nil || !strings.Contains(errOut, `unknown embeddings plugin "olama" (installed: fake, hello, ollama)`) {
		t.Errorf("use of an unknown plugin: %v %q", err, errOut)
	}
	_, errOut, err = exe(home, "", nil, "plugins", "use", "hello", "--set", "colour=blue")
	if err == nil || !strings.Contains(errOut, "colour") {
		t.Errorf("use with a bad option: %v %q", err, errOut)
	}
	if cfgAfter, _ := os.ReadFile(filepath.Join(home, "config.yaml")); string(cfgAfter) != string(cfgBefore) {
		t.Error("a refused plugins use changed config.yaml")
	}

	out, errOut, err = exe(home, "", nil, "plugins", "use", "hello", "--set", "dimensions=64")
	if err != nil || !strings.Contains(out, "embeddings provider: hello (model hello-hash-64, 64 dimensions, ready)") {
		t.Fatalf("plugins use hello: %v %q %q", err, out, errOut)
	}
	// The background embedder finishes; keyword search answers meanwhile.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, _, err = exe(home, "", nil, "status", "--json")
		var st map[string]any
		json.Unmarshal([]byte(out), &st)
		if err == nil && st["mode"] == "hybrid" && st["pending"] == 0.0 && st["embedded"].(float64) > 0 {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(home, "brain", "embed.log"))
			t.Fatalf("never hybrid: %s\nembed.log: %s", out, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
	out, _, err = exe(home, "", nil, "recall", "sarah", "--json")
	if err != nil || !strings.Contains(out, `"mode": "hybrid"`) || !strings.Contains(out, "reference/contacts.md") {
		t.Fatalf("hybrid recall: %v %s", err, out)
	}

	// Break the plugin: a different binary now stands where hello was.
	plugin := filepath.Join(filepath.Dir(binary), "memhost-embeddings-hello")
	saved, _ := os.ReadFile(plugin)
	t.Cleanup(func() { os.WriteFile(plugin, saved, 0o755) })
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, err = exe(home, "", nil, "recall", "sarah", "--json")
	if err != nil || !strings.Contains(out, `"mode": "keyword"`) || !strings.Contains(out, "reference/contacts.md") || !strings.Contains(out, "hello") {
		t.Errorf("recall with a broken plugin: %v\n%s\n%s", err, out, errOut)
	}
}

// TestBinaryWatchSurvivesPluginKill: watch holds the provider's process;
// killing that process loses nothing: watch restarts it and embeds the
// pages written afterwards, and recall answers throughout.
func TestBinaryWatchSurvivesPluginKill(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "notebook", "knowledge"), 0o755)
	os.WriteFile(filepath.Join(home, "notebook", "knowledge", "a.md"), []byte("# A\nfirst page about lanterns\n"), 0o644)
	// Chosen in config.yaml, not with `plugins use`: that starts a
	// background embed process, which (nice 10, under load) could still
	// be starting when b.md is written below and embed it before watch.
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("memory:\n  embedding:\n    plugin: hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := exe(home, "", nil, "embed"); err != nil {
		t.Fatalf("embed: %v %s", err, errOut)
	}
	watch := exec.Command(binary, "watch")
	watch.Env = append(os.Environ(), "MEMHOST_HOME="+home, "MEMHOST_MEMORY_SYNC_WATCHDEBOUNCEMS=50")
	var watchOut, watchErr syncbuf.Buffer // written by exec's copiers while we read
	watch.Stdout, watch.Stderr = &watchOut, &watchErr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer watch.Process.Kill()

	// The watcher starts the plugin for its first embedding run.
	var plugin int
	deadline := time.Now().Add(10 * time.Second)
	for plugin == 0 {
		plugin = childNamed(watch.Process.Pid, "memhost-embedd")
		if time.Now().After(deadline) {
			t.Fatal("watch never started the plugin")
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(plugin, syscall.SIGKILL)

	// Recall answers right after the kill (its own plugin process).
	quiet := []string{"MEMHOST_MEMORY_SYNC_SYNCONSEARCH=false", "MEMHOST_MEMORY_EMBEDDING_RECALLBUDGETMS=0"}
	if out, _, err := exe(home, "", quiet, "recall", "lanterns"); err != nil || !strings.Contains(out, "knowledge/a.md") || !strings.Contains(out, "hybrid") {
		t.Errorf("recall right after the kill: %v\n%s", err, out)
	}
	// Only watch can index and embed this page: status embeds nothing.
	os.WriteFile(filepath.Join(home, "notebook", "knowledge", "b.md"), []byte("# B\nsecond page about lanterns\n"), 0o644)
	deadline = time.Now().Add(20 * time.Second)
	for {
		out, _, err := exe(home, "", quiet, "status", "--json") // status embeds nothing
		var st map[string]any
		json.Unmarshal([]byte(out), &st)
		if err == nil && st["pending"] == 0.0 && st["embedded"] == 2.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch did not embed after its plugin was killed: %s\nwatch out:\n%s\nwatch err:\n%s", out, watchOut.String(), watchErr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p := childNamed(watch.Process.Pid, "memhost-embedd"); p == 0 || p == plugin {
		t.Errorf("plugin pid after the kill: %d (was %d)", p, plugin)
	}
	if !strings.Contains(watchOut.String(), "embedded 1 chunks with hello") {
		elog, _ := os.ReadFile(filepath.Join(home, "brain", "embed.log"))
		t.Errorf("watch did not log the embedding:\n%s\nerr:%s\nembed.log:\n%s", watchOut.String(), watchErr.String(), elog)
	}
	watch.Process.Signal(syscall.SIGINT)
	if err := watch.Wait(); err != nil {
		t.Errorf("watch: %v\n%s", err, watchErr.String())
	}
}

// childNamed returns the pid of a child of parent whose command name starts
// with prefix (Linux /proc), or 0.
func childNamed(parent int, prefix string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		fields := strings.Fields(s[close+1:])
		var pid, ppid int
		fmt.Sscan(e.Name(), &pid)
		if len(fields) > 1 {
			fmt.Sscan(fields[1], &ppid)
		}
		if ppid == parent && strings.HasPrefix(s[open+1:close], prefix) {
			return pid
		}
	}
	return 0
}

// TestBinaryOllama: memhost plugins use ollama against a server that
// speaks Ollama's API; recall is hybrid; with the server stopped, recall
// answers keyword-only and says why; when it is back, hybrid again.
// Not parallel: it closes its fake Ollama and listens on the same port
// again, which another test could take in between.
func TestBinaryOllama(t *testing.T) {
	srv := fakeollama.New(map[string]fakeollama.Model{
		"embeddinggemma:latest": {Dimensions: 64, Capabilities: []string{"embedding"}, Digest: "85462619ee72553d"},
	})
	defer srv.Close()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "notebook", "reference"), 0o755)
	os.WriteFile(filepath.Join(home, "notebook", "reference", "contacts.md"), []byte("# Contacts\n\n## Sarah Chen\n- Mobile: 555-1234\n"), 0o644)

	out, errOut, err := exe(home, "", nil, "plugins", "use", "ollama", "--set", "url="+srv.URL)
	if err != nil || !strings.Contains(out, "embeddings provider: ollama (model ollama/embeddinggemma:latest@85462619ee72, 64 dimensions, ready)") {
		t.Fatalf("plugins use ollama: %v\n%s\n%s", err, out, errOut)
	}
	if _, errOut, err := exe(home, "", nil, "sync"); err != nil {
		t.Fatalf("sync: %v %s", err, errOut)
	}
	out, _, err = exe(home, "", nil, "recall", "sarah mobile", "--json")
	if err != nil || !strings.Contains(out, `"mode": "hybrid"`) || !strings.Contains(out, "reference/contacts.md") {
		t.Fatalf("hybrid recall: %v\n%s", err, out)
	}
	out, _, _ = exe(home, "", nil, "plugins", "status")
	if !strings.Contains(out, "search:   hybrid") || !strings.Contains(out, "health:   ping ok") {
		t.Errorf("plugins status:\n%s", out)
	}

	srv.Close() // Ollama stops
	out, errOut, err = exe(home, "", nil, "recall", "sarah mobile", "--json")
	want := "Ollama is not reachable at " + srv.URL + ": start it with `ollama serve`"
	if err != nil || !strings.Contains(out, `"mode": "keyword"`) || !strings.Contains(out, want) || !strings.Contains(out, "reference/contacts.md") {
		t.Errorf("recall with Ollama down: %v\n%s\n%s", err, out, errOut)
	}
	out, _, _ = exe(home, "", nil, "status")
	if !strings.Contains(out, want) {
		t.Errorf("status with Ollama down:\n%s", out)
	}

	// Written during the outage: searchable by keyword, queued for a vector.
	if _, errOut, err := exe(home, "", nil, "remember", "Bob Smith - Phone: 555-9876"); err != nil {
		t.Fatalf("remember during the outage: %v %s", err, errOut)
	}
	// The rewritten page's chunks all wait (unchanged ones will come from
	// the cache).
	out, _, _ = exe(home, "", nil, "status", "--json")
	if strings.Contains(out, `"pending": 0`) || !strings.Contains(out, `"mode": "keyword"`) {
		t.Errorf("status after a write during the outage:\n%s", out)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	out, _, err = exe(home, "", nil, "recall", "bob phone", "--json")
	if err != nil || !strings.Contains(out, `"mode": "hybrid"`) {
		t.Errorf("recall once Ollama is back: %v\n%s", err, out)
	}
	out, _, _ = exe(home, "", nil, "status", "--json")
	if !strings.Contains(out, `"pending": 0`) || !strings.Contains(out, `"mode": "hybrid"`) {
		t.Errorf("queue did not catch up:\n%s", out)
	}
}

// sharedModel is ../shared/models' MiniLM; tests that need it skip without.
func sharedModel(t *testing.T) string {
	t.Helper()
	p, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "models", "all-MiniLM-L6-v2-Q4_K_M.gguf"))
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no test model at %s: place all-MiniLM-L6-v2-Q4_K_M.gguf there to run this test", p)
	}
	return p
}

// localBinaries returns a folder with memhost and the local provider
// beside it (the default provider when installed), built once.
var localOnce struct {
	sync.Once
	dir string
	err error
}

func localBinaries(t *testing.T) string {
	t.Helper()
	localOnce.Do(func() {
		dir, err := os.MkdirTemp("", "memhost-local-")
		if err != nil {
			localOnce.err = err
			return
		}
		for _, name := range []string{"memhost", "memhost-core"} {
			b, _ := os.ReadFile(filepath.Join(filepath.Dir(binary), name))
			os.WriteFile(filepath.Join(dir, name), b, 0o755)
		}
		localOnce.dir = dir
		// make test builds it first (with the CPU flags it needs); a bare
		// go test builds it here.
		if b, err := os.ReadFile(filepath.Join("..", "..", "bin", "memhost-embeddings-local")); err == nil {
			localOnce.err = os.WriteFile(filepath.Join(dir, "memhost-embeddings-local"), b, 0o755)
			return
		}
		bin, err := testbin.Build("../../plugins/embeddings-local", "")
		if err == nil {
			err = testbin.Copy(bin, filepath.Join(dir, "memhost-embeddings-local"))
		}
		localOnce.err = err
	})
	if localOnce.err != nil {
		t.Fatalf("building the local provider: %v", localOnce.err)
	}
	return localOnce.dir
}

// TestBinaryLocal: with the local provider installed and its model in the
// home, nothing needs configuring: "how can I call Sarah?" finds her number
// first, in hybrid mode, though the page never says "call".
func TestBinaryLocal(t *testing.T) {
	t.Parallel() // a home and processes of its own
	model := sharedModel(t)
	bin := filepath.Join(localBinaries(t), "memhost")
	home := t.TempDir()
	pages := map[string]string{
		"reference/contacts.md": "# Contacts\n\n## Sarah Chen\n- Mobile: 555-1234\n",
		"knowledge/team.md":     "# Team\n\n## Meetings\n- The weekly planning meeting is on Tuesdays at 10:00.\n",
		"lists/shopping.md":     "# Shopping\n\n## Groceries\n- Oat milk\n- Eggs\n",
		"knowledge/stack.md":    "# Stack\n\n## Backend\n- The API runs on Go behind nginx.\n",
	}
	for p, c := range pages {
		os.MkdirAll(filepath.Join(home, "notebook", filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(home, "notebook", p), []byte(c), 0o644)
	}
	os.MkdirAll(filepath.Join(home, "models"), 0o755)
	b, _ := os.ReadFile(model)
	os.WriteFile(filepath.Join(home, "models", "all-MiniLM-L6-v2-Q4_K_M.gguf"), b, 0o644)

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "MEMHOST_HOME="+home)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("memhost %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	var rec recallJSON
	if err := json.Unmarshal([]byte(run("recall", "how can I call Sarah?", "--json")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Mode != "hybrid" || len(rec.Results["notebook"]) == 0 || rec.Results["notebook"][0].Heading != "## Sarah Chen" {
		t.Fatalf("recall: mode %q (%s), results %+v", rec.Mode, rec.Reason, rec.Results["notebook"])
	}
	out := run("plugins", "status")
	if !strings.Contains(out, "plugin:   local") || !strings.Contains(out, "all-MiniLM-L6-v2-Q4_K_M@2ec4cee28a27 (384 dimensions)") || !strings.Contains(out, "search:   hybrid") {
		t.Errorf("plugins status:\n%s", out)
	}
	if out := run("models", "list"); !strings.Contains(out, "all-MiniLM-L6-v2-Q4_K_M.gguf") || !strings.Contains(out, "ready") {
		t.Errorf("models list:\n%s", out)
	}
}

// TestBinaryModelsPull downloads the model from a local server with
// progress lines, refuses a bad checksum, and removes a model.
func TestBinaryModelsPull(t *testing.T) {
	t.Parallel() // a home and processes of its own
	model, err := os.ReadFile(sharedModel(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "m.gguf", time.Unix(0, 0), bytes.NewReader(model))
	}))
	defer srv.Close()
	home := t.TempDir()
	url := srv.URL + "/all-MiniLM-L6-v2-Q4_K_M.gguf"
	out, errOut, err := exe(home, "", nil, "models", "pull", url, "--sha256", "2ec4cee28a27a9c973d5f5230930d6ef6e52694bd2bc71be26a9bef5b1d755e6")
	if err != nil || !strings.Contains(out, "downloading: 100%") || !strings.Contains(out, "downloaded "+filepath.Join(home, "models", "all-MiniLM-L6-v2-Q4_K_M.gguf")) {
		t.Fatalf("models pull: %v\n%s\n%s", err, out, errOut)
	}
	_, errOut, err = exe(home, "", nil, "models", "pull", srv.URL+"/other.gguf", "--sha256", strings.Repeat("0", 64))
	if err == nil || !strings.Contains(errOut, "checksum mismatch") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("bad checksum: %v %q", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "models", "other.gguf")); err == nil {
		t.Error("a model with a bad checksum was kept")
	}
	if out, _, err := exe(home, "", nil, "models", "rm", "all-MiniLM-L6-v2-Q4_K_M"); err != nil || !strings.Contains(out, "removed") {
		t.Errorf("models rm: %v %s", err, out)
	}
	if _, errOut, err := exe(home, "", nil, "models", "rm", "nothing"); err == nil || !strings.Contains(errOut, "no such model") {
		t.Errorf("rm of a missing model: %v %q", err, errOut)
	}
}

// TestBinaryPluginExitsWithHost: a host killed before it could stop its
// plugin does not leave the plugin running.
func TestBinaryPluginExitsWithHost(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	if _, errOut, err := exe(home, "", nil, "plugins", "use", "hello"); err != nil {
		t.Fatalf("plugins use: %v %s", err, errOut)
	}
	watch := exec.Command(binary, "watch")
	watch.Env = append(os.Environ(), "MEMHOST_HOME="+home)
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	var plugin int
	for deadline := time.Now().Add(10 * time.Second); plugin == 0; {
		plugin = childNamed(watch.Process.Pid, "memhost-embedd")
		if time.Now().After(deadline) {
			watch.Process.Kill()
			t.Fatal("watch never started the plugin")
		}
		time.Sleep(20 * time.Millisecond)
	}
	watch.Process.Kill()
	watch.Wait()
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(plugin, 0) == nil; {
		if time.Now().After(deadline) {
			syscall.Kill(plugin, syscall.SIGKILL)
			t.Fatal("the plugin outlived its killed host")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBinaryModelsPullLocalFile: a model file the user has (offline) is
// installed with one `models pull PATH`, checked against the default
// model's known digest, and listed; a relative path is the caller's.
func TestBinaryModelsPullLocalFile(t *testing.T) {
	t.Parallel() // a home and processes of its own
	model := sharedModel(t)
	home := t.TempDir()
	work := t.TempDir()
	rel, err := filepath.Rel(work, model)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "models", "pull", rel)
	cmd.Dir, cmd.Env = work, append(os.Environ(), "MEMHOST_HOME="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\ninstalled "+filepath.Join(home, "models", modelstore.DefaultName)) || !strings.HasPrefix(string(out), "copying: ") ||
		!strings.Contains(string(out), modelstore.DefaultSHA256) {
		t.Fatalf("models pull %s: %v\n%q", rel, err, out)
	}
	list, _, err := exe(home, "", nil, "models", "list")
	if err != nil || !strings.Contains(list, modelstore.DefaultName) {
		t.Fatalf("models list: %v\n%s", err, list)
	}
	again, _, err := exe(home, "", nil, "models", "pull", "file://"+model)
	if err != nil || !strings.HasPrefix(again, "already present: ") {
		t.Fatalf("again: %v\n%s", err, again)
	}
}

// TestBinaryUseLocalDimensions: plugins use local with a model file on a
// fresh home names the model's real dimensions (read from the file while
// the model loads), never "0 dimensions".
func TestBinaryUseLocalDimensions(t *testing.T) {
	t.Parallel() // a home and processes of its own
	model := sharedModel(t)
	bin := filepath.Join(localBinaries(t), "memhost")
	home := t.TempDir()
	for _, args := range [][]string{{"init"}, {"plugins", "use", "local", "--set", "model=" + model}} {
		cmd := exec.Command(bin, append([]string{"--home", home}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("memhost %v: %v\n%s", args, err, errb.String())
		}
		if args[0] != "plugins" {
			continue
		}
		want := regexp.MustCompile(`^embeddings provider: local \(model all-MiniLM-L6-v2-Q4_K_M(@[0-9a-f]{12})?, 384 dimensions, (loading|ready)\)\n`)
		if !want.MatchString(out.String()) {
			t.Errorf("plugins use local: got %q, want a line matching %s", out.String(), want)
		}
	}
}

// procStat returns a process's parent and nice value from /proc/PID/stat.
func procStat(pid int) (ppid, nice int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	// pid (comm) state ppid ... : field 19, nice, is the 16th after comm.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 17 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: %d fields after the name", pid, len(fields))
	}
	ppid, err = strconv.Atoi(fields[1])
	if err == nil {
		nice, err = strconv.Atoi(fields[16])
	}
	return ppid, nice, err
}

// TestBinaryBackgroundEmbedLowPriority: the embedding plugins use starts
// in the background runs at nice 10 (or this process's nice, if lower
// still), and so does the plugin it starts: it yields the CPU to the
// user's work.
func TestBinaryBackgroundEmbedLowPriority(t *testing.T) {
	t.Parallel() // a home and processes of its own
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "notebook", "knowledge"), 0o755)
	os.WriteFile(filepath.Join(home, "notebook", "knowledge", "a.md"), []byte("# A\nlanterns on the river\n"), 0o644)
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	testbin.Install(t, "../../registry/testdata/faulty", "", filepath.Join(home, "plugins", "memhost-embeddings-faulty"))
	// The plugin writes its pid as it starts, then waits a second before
	// serving: long enough to read its priority.
	pidFile := filepath.Join(home, "plugin.pid")
	env := []string{"MEMHOST_FAULTY_PID_FILE=" + pidFile, "MEMHOST_FAULTY_START_DELAY=1s"}
	if out, errOut, err := exe(home, "", env, "plugins", "use", "faulty"); err != nil || !strings.Contains(out, "in the background") {
		t.Fatalf("plugins use: %v\n%s\n%s", err, out, errOut)
	}
	_, own, err := procStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	want := max(own, 10)
	// The pid file names plugins use's own plugin (gone now) until the
	// background embedder's plugin starts.
	var plugin, embedder int
	for deadline := time.Now().Add(10 * time.Second); embedder == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background embedder never started the plugin")
		}
		b, _ := os.ReadFile(pidFile)
		pid, _ := strconv.Atoi(string(b))
		ppid, _, err := procStat(pid)
		if err != nil {
			continue
		}
		if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ppid)); bytes.HasSuffix(cmdline, []byte("\x00embed\x00")) {
			plugin, embedder = pid, ppid
		}
	}
	t.Cleanup(func() { syscall.Kill(plugin, syscall.SIGKILL); syscall.Kill(embedder, syscall.SIGKILL) })
	for what, pid := range map[string]int{"the background embedder": embedder, "its plugin": plugin} {
		if _, nice, err := procStat(pid); err != nil || nice != want {
			t.Errorf("%s (pid %d) runs at nice %d (%v), want %d", what, pid, nice, err, want)
		}
		// Linux keeps a nice value per thread: every thread is lowered.
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, task := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
			if err != nil {
				continue // the thread ended
			}
			s := string(b)
			if f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]); len(f) > 16 && f[16] != strconv.Itoa(want) {
				t.Errorf("%s (pid %d): thread %s runs at nice %s, want %d", what, pid, task.Name(), f[16], want)
			}
		}
	}
}

// TestBinaryOfflineRecall: as installed offline (the local provider beside
// memhost, no model, its download failed moments ago), recall answers by
// keyword with the words the local plugin gives for it.
func TestBinaryOfflineRecall(t *testing.T) {
	t.Parallel() // a home and processes of its own
	bin := filepath.Join(localBinaries(t), "memhost")
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "notebook", "reference"), 0o755)
	os.WriteFile(filepath.Join(home, "notebook", "reference", "contacts.md"), []byte("# Contacts\n\n## Sarah Chen\n- Mobile: 555-1234\n"), 0o644)
	store := &modelstore.Store{Dir: filepath.Join(home, "models")}
	os.MkdirAll(store.Dir, 0o755)
	ref := modelstore.Ref{Name: modelstore.DefaultName, Path: filepath.Join(store.Dir, modelstore.DefaultName), URL: "http://127.0.0.1:1/" + modelstore.DefaultName}
	if err := store.Pull(t.Context(), ref, nil); err == nil {
		t.Fatal("a download from 127.0.0.1:1 succeeded")
	}
	cmd := exec.Command(bin, "--no-server", "recall", "sarah", "--json")
	cmd.Env = append(os.Environ(), "MEMHOST_HOME="+home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("recall: %v", err)
	}
	var rec recallJSON
	if err := json.Unmarshal(out, &rec); err != nil {
		t.Fatal(err)
	}
	want := "model not downloaded (offline); memhost models pull FILE|URL installs all-MiniLM-L6-v2-Q4_K_M.gguf"
	if rec.Mode != "keyword" || rec.Reason != want || len(rec.Results["notebook"]) == 0 {
		t.Errorf("offline recall: mode %q, reason %q, results %+v; want keyword results, reason %q", rec.Mode, rec.Reason, rec.Results["notebook"], want)
	}
}
