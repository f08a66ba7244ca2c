package server_test

// docs/api.md is tested: every ```sh block whose command starts with curl
// is run, with the real curl, against real servers (server.Run on
// temporary homes), and its answer is checked against the ```http block
// that follows it. docs/api.md ("Examples are tests") states the
// convention for its writers; this file is its implementation.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/internal/syncbuf"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/mcp"
	"github.com/memhost/memhost/server"
)

var showAPIDoc = flag.Bool("apidoc.show", false, "log the real answer of every docs/api.md example (to refresh the document)")

const apiDocPath = "../docs/api.md"

// example is one curl command of docs/api.md and the answer it documents.
type example struct {
	line    int    // of the ```sh fence
	section string // the heading above it
	command string // the block's text, run by sh -c
	answer  string // the ```http block after it
	// Options from a <!-- test: ... --> comment right above the block.
	server     string // which server it runs against; default "main"
	exit       int    // curl's expected exit status; default 0
	background bool   // runs while the next examples run; checked at the end
}

func (e example) name() string {
	return fmt.Sprintf("api.md:%d %s", e.line, e.section)
}

var (
	testComment  = regexp.MustCompile(`^<!--\s*test(?::\s*(.*?))?\s*-->$`)
	routeHeading = regexp.MustCompile(`^### ([A-Z]+) (/\S+)$`)
	routePattern = regexp.MustCompile(`mux\.Handle(?:Func)?\("([A-Z]+) (/[^"]*)"`)
	curlMethod   = regexp.MustCompile(`(?:^|\s)-X\s*([A-Z]+)`)
	curlBody     = regexp.MustCompile(`(?:^|\s)(?:-d|--data\S*|--json|-T|-F)\s`)
)

// parseAPIDoc finds the examples of a markdown document and the
// "### METHOD /path" headings with the line each starts at.
func parseAPIDoc(doc string) (examples []example, headings map[string]int, err error) {
	lines := strings.Split(doc, "\n")
	headings = map[string]int{}
	section := ""
	var opts string // from the last test comment, "" once used
	optsLine := 0
	for i := 0; i < len(lines); i++ {
		l := strings.TrimRight(lines[i], " \t\r")
		switch {
		case strings.HasPrefix(l, "#"):
			if optsLine != 0 {
				return nil, nil, fmt.Errorf("api.md:%d: a test comment must be right above a ```sh block", optsLine)
			}
			section = strings.TrimSpace(strings.TrimLeft(l, "#"))
			if m := routeHeading.FindStringSubmatch(l); m != nil {
				headings[m[1]+" "+m[2]] = i + 1
			}
			continue
		case testComment.MatchString(l):
			opts, optsLine = testComment.FindStringSubmatch(l)[1]+" ", i+1
			continue
		case strings.TrimSpace(l) == "":
			continue
		case !strings.HasPrefix(l, "```"):
			if optsLine != 0 {
				return nil, nil, fmt.Errorf("api.md:%d: a test comment must be right above a ```sh block", optsLine)
			}
			continue
		}
		// A fenced block: skip it whole unless it is a curl example.
		lang := strings.TrimPrefix(l, "```")
		body, end, ferr := fenced(lines, i)
		if ferr != nil {
			return nil, nil, ferr
		}
		first := strings.TrimSpace(body)
		if lang != "sh" || !strings.HasPrefix(first, "curl ") {
			if optsLine != 0 {
				return nil, nil, fmt.Errorf("api.md:%d: a test comment must be right above a ```sh block starting with curl", optsLine)
			}
			i = end
			continue
		}
		ex := example{line: i + 1, section: section, command: body, server: "main"}
		for _, o := range strings.Fields(opts) {
			k, v, _ := strings.Cut(o, "=")
			switch k {
			case "server":
				ex.server = v
			case "exit":
				if ex.exit, err = strconv.Atoi(v); err != nil {
					return nil, nil, fmt.Errorf("api.md:%d: exit=%q is not a number", optsLine, v)
				}
			case "background":
				ex.background = true
			default:
				return nil, nil, fmt.Errorf("api.md:%d: unknown test option %q (server=, exit=, background)", optsLine, o)
			}
		}
		opts, optsLine = "", 0
		// The answer: the next block, after blank lines only.
		j := end + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || strings.TrimSpace(lines[j]) != "```http" {
			return nil, nil, fmt.Errorf("api.md:%d: a curl example must be followed by a ```http block with its answer", ex.line)
		}
		if ex.answer, end, ferr = fenced(lines, j); ferr != nil {
			return nil, nil, ferr
		}
		examples = append(examples, ex)
		i = end
	}
	return examples, headings, nil
}

// fenced returns the text of the block whose opening fence is lines[start]
// and the index of its closing fence.
func fenced(lines []string, start int) (string, int, error) {
	for k := start + 1; k < len(lines); k++ {
		if strings.TrimRight(lines[k], " \t\r") == "```" {
			return strings.Join(lines[start+1:k], "\n"), k, nil
		}
	}
	return "", 0, fmt.Errorf("api.md:%d: the block is not closed", start+1)
}

// requestMethod is the HTTP method a curl command uses.
func requestMethod(cmd string) string {
	if m := curlMethod.FindStringSubmatch(cmd); m != nil {
		return m[1]
	}
	if curlBody.MatchString(cmd) {
		return http.MethodPost
	}
	return http.MethodGet
}

// TestAPIDocRoutes checks that docs/api.md documents every route (the
// operations of api.Ops and the other routes of routes.go) under a "### METHOD /path" heading with at least one curl
// example of that method and path, and documents no route that does not
// exist.
func TestAPIDocRoutes(t *testing.T) {
	doc, err := os.ReadFile(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("routes.go")
	if err != nil {
		t.Fatal(err)
	}
	examples, headings, err := parseAPIDoc(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	routes := map[string]bool{}
	for _, o := range api.Ops {
		routes["POST "+o.Info().Path()] = true
	}
	for _, m := range routePattern.FindAllStringSubmatch(string(src), -1) {
		routes[m[1]+" "+m[2]] = true
	}
	if len(routes) < len(api.Ops)+10 {
		t.Fatalf("found %d routes in routes.go; has the way routes are registered changed?", len(routes))
	}
	for r := range routes {
		if _, ok := headings[r]; !ok {
			t.Errorf("route %s (routes.go) has no \"### %s\" heading in docs/api.md", r, r)
			continue
		}
		method, path, _ := strings.Cut(r, " ")
		prefix, _, _ := strings.Cut(path, "{")
		ok := slices.ContainsFunc(examples, func(e example) bool {
			return e.section == r && requestMethod(e.command) == method && strings.Contains(e.command, prefix)
		})
		if !ok {
			t.Errorf("api.md:%d: %s has no curl example (a ```sh block under its heading doing %s %s...)", headings[r], r, method, prefix)
		}
	}
	for h, line := range headings {
		if !routes[h] {
			t.Errorf("api.md:%d: %s is documented but routes.go has no such route", line, h)
		}
	}
}

// TestAPIDocExamples runs every curl example of docs/api.md, in the
// document's order, against real servers, and checks each answer.
func TestAPIDocExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("docs/api.md's examples are run with curl, which is not installed (%v); install curl (the test installs nothing)", err)
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("docs/api.md's examples are run with sh -c: %v", err)
	}
	doc, err := os.ReadFile(apiDocPath)
	if err != nil {
		t.Fatal(err)
	}
	examples, _, err := parseAPIDoc(string(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 {
		t.Fatal("docs/api.md has no curl examples")
	}

	models := httptest.NewServer(http.HandlerFunc(serveTestModel))
	defer models.Close()
	remote := bareRemote(t) // $REMOTE: the git federation examples' remote
	curlHome := t.TempDir() // HOME for curl: no ~/.curlrc of the person running the test
	servers := map[string]*docServer{}
	var bg []*running
	for _, ex := range examples {
		s := servers[ex.server]
		if s == nil {
			s = startDocServer(t, ex.server)
			servers[ex.server] = s
		}
		env := []string{
			"PATH=" + os.Getenv("PATH"),
			"HOME=" + curlHome,
			"SOCK=" + s.info.Socket,
			"URL=" + s.info.URL,
			"MEMHOST_HOME=" + s.info.Home,
			"MODEL_URL=" + models.URL + "/tiny-embed.gguf",
			"REMOTE=" + remote,
		}
		r := start(t, ex, env)
		if ex.background {
			r.waitHeaders(t)
			bg = append(bg, r)
			continue
		}
		r.wait()
		t.Run(ex.name(), func(t *testing.T) { r.check(t) })
	}
	for _, r := range bg {
		r.wait()
		t.Run(r.ex.name(), func(t *testing.T) { r.check(t) })
	}
}

// running is an example's command in flight.
type running struct {
	ex   example
	cmd  *exec.Cmd
	out  syncbuf.Buffer
	errb bytes.Buffer
	err  error
	done chan struct{}
	took time.Duration
}

func start(t *testing.T, ex example, env []string) *running {
	r := &running{ex: ex, done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	r.cmd = exec.CommandContext(ctx, "sh", "-c", ex.command)
	r.cmd.Env = env
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.errb
	begin := time.Now()
	if err := r.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("%s: %v", ex.name(), err)
	}
	go func() {
		defer cancel()
		r.err = r.cmd.Wait()
		r.took = time.Since(begin)
		close(r.done)
	}()
	return r
}

func (r *running) wait() { <-r.done }

// waitHeaders returns once a background command has its answer's headers
// (a stream then is subscribed), or it ended.
func (r *running) waitHeaders(t *testing.T) {
	deadline := time.After(10 * time.Second)
	for {
		if strings.Contains(strings.ReplaceAll(r.out.String(), "\r\n", "\n"), "\n\n") {
			return
		}
		select {
		case <-r.done:
			return
		case <-deadline:
			t.Fatalf("%s: no answer within 10 s", r.ex.name())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// check compares the command's outcome with the document.
func (r *running) check(t *testing.T) {
	out := strings.ReplaceAll(r.out.String(), "\r\n", "\n")
	if *showAPIDoc {
		t.Logf("%s (%v):\n%s", r.ex.name(), r.took.Round(time.Millisecond), out)
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(r.err, &ee):
		code = ee.ExitCode()
	case r.err != nil:
		t.Fatalf("running the example: %v", r.err)
	}
	if code != r.ex.exit {
		t.Fatalf("curl exited with status %d, want %d; stderr: %s\noutput:\n%s", code, r.ex.exit, r.errb.String(), clip(out))
	}
	if err := compareAnswers(r.ex.answer, out); err != nil {
		t.Fatalf("%v\nthe command:\n%s\nits real answer:\n%s", err, r.ex.command, clip(out))
	}
}

// compareAnswers checks a real curl -i output against a documented one:
// the same status code; the documented headers present, with the same
// values but for those that vary; the documented body's JSON keys present
// in the real body. Bodies are compared as the real Content-Type says:
// JSON and NDJSON as a series of JSON values, text/event-stream as events;
// each documented value (event) must match a real one, in order, allowing
// real ones in between (streams may send more progress lines than shown).
func compareAnswers(documented, real string) error {
	dStatus, dHeader, dBody, err := parseHTTP(documented)
	if err != nil {
		return fmt.Errorf("the documented answer: %v", err)
	}
	rStatus, rHeader, rBody, err := parseHTTP(real)
	if err != nil {
		return fmt.Errorf("the real answer (did the command use curl -i?): %v", err)
	}
	if dStatus != rStatus {
		return fmt.Errorf("status %d, documented %d", rStatus, dStatus)
	}
	for name, vs := range dHeader {
		got := rHeader.Get(name)
		switch {
		case got == "":
			return fmt.Errorf("header %s is documented but missing", name)
		case variesHeader[name]:
		case got != vs[0]:
			return fmt.Errorf("header %s is %q, documented %q", name, got, vs[0])
		}
	}
	if strings.TrimSpace(dBody) == "" {
		if strings.TrimSpace(rBody) != "" {
			return fmt.Errorf("the answer has a body; document it")
		}
		return nil
	}
	var docVals, realVals []any
	if strings.HasPrefix(rHeader.Get("Content-Type"), "text/event-stream") {
		if docVals, err = parseEvents(dBody); err != nil {
			return fmt.Errorf("the documented events: %v", err)
		}
		if realVals, err = parseEvents(rBody); err != nil {
			return fmt.Errorf("the real events: %v", err)
		}
		if len(docVals) == 0 {
			return fmt.Errorf("the documented stream shows no event")
		}
	} else {
		if docVals, err = jsonValues(dBody); err != nil {
			return fmt.Errorf("the documented body is not JSON: %v", err)
		}
		if realVals, err = jsonValues(rBody); err != nil {
			return fmt.Errorf("the real body is not JSON: %v", err)
		}
	}
	return matchInOrder(docVals, realVals)
}

// variesHeader are headers whose values differ from run to run (or build
// to build): only their presence is checked.
var variesHeader = map[string]bool{"Date": true, "Content-Length": true, "Memhost-Version": true, "Mcp-Session-Id": true}

// parseHTTP splits curl -i output into the final response's status,
// headers and body (1xx responses before it are skipped).
func parseHTTP(s string) (int, http.Header, string, error) {
	for {
		s = strings.TrimLeft(s, "\n")
		head, body, ok := strings.Cut(s, "\n\n")
		if !ok {
			head, body = strings.TrimRight(s, "\n"), ""
		}
		lines := strings.Split(head, "\n")
		f := strings.Fields(lines[0])
		if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
			return 0, nil, "", fmt.Errorf("no status line (HTTP/1.1 200 OK) at the start: %q", clip(lines[0]))
		}
		status, err := strconv.Atoi(f[1])
		if err != nil {
			return 0, nil, "", fmt.Errorf("status line %q", lines[0])
		}
		if status/100 == 1 {
			s = body
			continue
		}
		h := http.Header{}
		for _, l := range lines[1:] {
			k, v, ok := strings.Cut(l, ":")
			if !ok {
				return 0, nil, "", fmt.Errorf("header line %q", l)
			}
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
		return status, h, body, nil
	}
}

// jsonValues decodes a series of JSON values (one, or NDJSON lines).
func jsonValues(s string) ([]any, error) {
	var vs []any
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		var v any
		err := dec.Decode(&v)
		if err == io.EOF {
			return vs, nil
		}
		if err != nil {
			return vs, err
		}
		vs = append(vs, v)
	}
}

// sseEvent is a server-sent event as compared: its type and its data,
// decoded when it is JSON.
type sseEvent struct {
	Event string
	Data  any
}

func parseEvents(s string) ([]any, error) {
	var evs []any
	for _, block := range strings.Split(s, "\n\n") {
		ev := sseEvent{Event: "message"}
		var data []string
		for _, l := range strings.Split(block, "\n") {
			switch {
			case l == "", strings.HasPrefix(l, ":"): // a comment
			case strings.HasPrefix(l, "event:"):
				ev.Event = strings.TrimSpace(strings.TrimPrefix(l, "event:"))
			case strings.HasPrefix(l, "data:"):
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(l, "data:"), " "))
			case strings.HasPrefix(l, "id:"), strings.HasPrefix(l, "retry:"):
			default:
				return nil, fmt.Errorf("line %q is not an event stream's", clip(l))
			}
		}
		if data == nil {
			continue
		}
		raw := strings.Join(data, "\n")
		if err := json.Unmarshal([]byte(raw), &ev.Data); err != nil {
			ev.Data = raw
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// matchInOrder checks that each documented value matches a real value,
// in order.
func matchInOrder(doc, real []any) error {
	j := 0
	for i, d := range doc {
		var first error
		found := false
		for ; j < len(real) && !found; j++ {
			err := within(d, real[j], "")
			if err == nil {
				found = true
			} else if first == nil {
				first = err
			}
		}
		if !found {
			if first == nil {
				first = errors.New("the answer has no more values")
			}
			return fmt.Errorf("documented value %d of %d is not in the answer: %v", i+1, len(doc), first)
		}
	}
	return nil
}

// within reports how doc's shape is missing from got: a documented key
// the answer lacks, a documented array element it lacks, or a value of
// another JSON type. Values themselves are not compared (ids, times and
// sizes differ from run to run), except event types.
func within(doc, got any, at string) error {
	if doc == nil || got == nil {
		return nil // null stands for any value (an empty list may be null)
	}
	switch d := doc.(type) {
	case sseEvent:
		g, ok := got.(sseEvent)
		if !ok || g.Event != d.Event {
			return fmt.Errorf("event %q, documented %q", g.Event, d.Event)
		}
		return within(d.Data, g.Data, "data")
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: documented an object, got %s", where(at), jsonType(got))
		}
		for k, dv := range d {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: key %q is documented but missing", where(at), k)
			}
			if err := within(dv, gv, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s: documented an array, got %s", where(at), jsonType(got))
		}
		if len(g) < len(d) {
			return fmt.Errorf("%s: documented %d elements, got %d", where(at), len(d), len(g))
		}
		for i := range d {
			if err := within(d[i], g[i], fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	default:
		if jsonType(doc) != jsonType(got) {
			return fmt.Errorf("%s: documented a %s, got a %s", where(at), jsonType(doc), jsonType(got))
		}
	}
	return nil
}

func where(at string) string {
	if at == "" {
		return "the answer"
	}
	return strings.TrimPrefix(at, ".")
}

func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case sseEvent:
		return "event"
	}
	return "null"
}

func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "…"
	}
	return s
}

// docServer is a server the examples run against.
type docServer struct{ info server.Info }

// startDocServer starts a server on a new seeded home, listening on the
// unix socket and 127.0.0.1:0, and waits for its watcher's first sync.
// The server named "token" requires the bearer token (started with a
// token file, as `memhost serve --token-file` does); the one named "small"
// takes bodies of 1 MiB at most, so that the limit is tested without
// sending 80 MiB. It stops when the test ends, unless an example stopped
// it before.
func startDocServer(t *testing.T, name string) *docServer {
	home := t.TempDir()
	seedHome(t, home)
	listen := "127.0.0.1:0"
	opts := server.RunOptions{
		Home:            home,
		Listen:          &listen,
		Getenv:          func(string) string { return "" }, // no MEMHOST_* overrides of the person running the test
		ShutdownTimeout: 5 * time.Second,
		Open: func(ctx context.Context) (*host.Host, error) {
			return host.Open(ctx, host.Options{Home: home, Config: config.Default()})
		},
		MCP: func(h *host.Host, s *server.Server) http.Handler { return server.NewMCPHandler(h, s, mcp.Options{}) },
	}
	switch name {
	case "token":
		opts.TokenFile = filepath.Join(home, "brain", "serve.token")
	case "small":
		opts.MaxBody = 1 << 20
	}
	ready := make(chan server.Info, 1)
	opts.Ready = func(in server.Info) { ready <- in }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, opts) }()
	var s docServer
	select {
	case s.info = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("server %q: %v", name, err)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatalf("server %q did not start within 20 s", name)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("server %q: %v", name, err)
		}
	})
	waitFirstSync(t, s.info.Socket)
	return &s
}

// waitFirstSync waits until the server's watcher ran its first sync
// (debug status then has lastSyncDuration), so that the examples see an
// indexed notebook however fast they start.
func waitFirstSync(t *testing.T, sock string) {
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := hc.Get("http://memhost/api/debug/memory/status")
		if err == nil {
			var st struct {
				LastSyncDuration *float64 `json:"lastSyncDuration"`
			}
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if st.LastSyncDuration != nil {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the server's watcher did not sync within 10 s")
}

// seedHome writes what docs/api.md says the examples' home holds.
func seedHome(t *testing.T, home string) {
	files := map[string]string{
		"notebook/reference/contacts.md":   "# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n- Email: sarah@example.com\n- Leads the staging database migration at Acme\n\n## Bob Smith\n- Plumber, fixed the kitchen sink in March\n",
		"notebook/lists/shopping.md":       "# Shopping List\n\n## Groceries\n- oat milk\n- coffee beans\n",
		"notebook/knowledge/staging-db.md": "# Staging database\n\nPostgres 16, migrated from MySQL in February.\n\n## Hosts\n- primary: db1.staging.internal\n",
		"notebook/daily/2026-02-24.md":     "# Daily Log — 2026-02-24\n\n## 11:30 — Sarah meeting prep\nReviewed the staging database plan before the call with Sarah.\n",
		"sessions/planning.jsonl":          planningSession(),
		"import/4f35e220-c435.jsonl":       claudeTranscript,
	}
	for name, text := range files {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// planningSession is a memhost transcript of six turns that claim 6000
// tokens each: 36000, more than compaction keeps (keepRecentTokens 20000).
func planningSession() string {
	said := []string{
		"Let's plan the staging database migration to Postgres.",
		"First step: freeze schema changes on MySQL for the week of the move.",
		"Sarah will own the data export; Bob is not involved.",
		"We copy the data with pgloader, then run the test suite against staging.",
		"Cut-over is planned for Thursday night, with a rollback window of two hours.",
		"Agreed. I will write the runbook tomorrow.",
	}
	var b strings.Builder
	for i, text := range said {
		role := []string{"user", "assistant"}[i%2]
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprintf("p%d", i+1), "type": "message", "role": role,
			"content": text, "timestamp": fmt.Sprintf("2026-02-20T10:%02d:00Z", i), "tokenCount": 6000})
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// claudeTranscript is a Claude Code transcript (its JSONL format).
const claudeTranscript = `{"type":"summary","summary":"Config file session","leafUuid":"a1"}
{"parentUuid":null,"sessionId":"4f35e220-c435","type":"user","message":{"role":"user","content":"Please add a config file for the staging database"},"uuid":"u1","timestamp":"2026-02-23T07:27:40.079Z"}
{"parentUuid":"u1","sessionId":"4f35e220-c435","type":"assistant","message":{"role":"assistant","model":"claude-sonnet-4","content":[{"type":"text","text":"I created config/staging.yaml with the Postgres host db1.staging.internal."}]},"uuid":"a1","timestamp":"2026-02-23T07:27:45.000Z"}
`

// bareRemote makes $REMOTE, an empty bare git repository (branch main)
// for the examples of git/init and git/sync.
func bareRemote(t *testing.T) string {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("docs/api.md's git federation examples need git, which is not installed (%v); make need-git installs it", err)
	}
	dir := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v %s", err, out)
	}
	return dir
}

// serveTestModel serves $MODEL_URL: a small file standing for a GGUF
// model (models/pull does not look inside it).
func serveTestModel(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/tiny-embed.gguf" {
		http.NotFound(w, r)
		return
	}
	http.ServeContent(w, r, "tiny-embed.gguf", time.Time{}, bytes.NewReader(bytes.Repeat([]byte("memhost "), 40000)))
}

// TestAPIDocCompare checks the comparison the examples rely on: it must
// catch a wrong status, a missing header or key, and a missing event.
func TestAPIDocCompare(t *testing.T) {
	const real = "HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\nContent-Type: application/json\nDate: now\n\n{\"a\":1,\"b\":{\"c\":[{\"d\":true}]},\"e\":null}\n"
	const stream = "HTTP/1.1 200 OK\nContent-Type: text/event-stream\n\n: hello\n\nevent: write\ndata: {\"op\":\"remember\"}\n\nevent: sync\ndata: {\"paths\":[\"a.md\"]}\n\n"
	tests := []struct {
		name, doc, real string
		ok              bool
	}{
		{"same", "HTTP/1.1 200 OK\n\n{\"a\":7,\"b\":{\"c\":[{\"d\":false}]}}", real, true},
		{"fewer keys", "HTTP/1.1 200 OK\nDate: then\n\n{\"b\":{}}", real, true},
		{"null for a list", "HTTP/1.1 200 OK\n\n{\"e\":[1,2]}", real, true},
		{"other status", "HTTP/1.1 404 Not Found\n\n{\"a\":1}", real, false},
		{"missing key", "HTTP/1.1 200 OK\n\n{\"a\":1,\"x\":2}", real, false},
		{"missing nested key", "HTTP/1.1 200 OK\n\n{\"b\":{\"c\":[{\"z\":1}]}}", real, false},
		{"more elements", "HTTP/1.1 200 OK\n\n{\"b\":{\"c\":[{},{}]}}", real, false},
		{"other type", "HTTP/1.1 200 OK\n\n{\"a\":\"1\"}", real, false},
		{"missing header", "HTTP/1.1 200 OK\nWWW-Authenticate: Bearer\n\n{}", real, false},
		{"other content type", "HTTP/1.1 200 OK\nContent-Type: application/x-ndjson\n\n{}", real, false},
		{"no body documented", "HTTP/1.1 200 OK", real, false},
		{"not JSON", "HTTP/1.1 200 OK\n\n{\"a\":", real, false},
		{"events", "HTTP/1.1 200 OK\n\nevent: sync\ndata: {\"paths\":[]}", stream, true},
		{"events in order", "HTTP/1.1 200 OK\n\nevent: write\ndata: {}\n\nevent: sync\ndata: {}", stream, true},
		{"events out of order", "HTTP/1.1 200 OK\n\nevent: sync\ndata: {}\n\nevent: write\ndata: {}", stream, false},
		{"missing event", "HTTP/1.1 200 OK\n\nevent: rebuild\ndata: {}", stream, false},
		{"no events documented", "HTTP/1.1 200 OK\n\n{}", stream, false},
		{"not curl -i", "HTTP/1.1 200 OK\n\n{}", "{}", false},
	}
	for _, tt := range tests {
		err := compareAnswers(tt.doc, tt.real)
		if got := err == nil; got != tt.ok {
			t.Errorf("%s: compareAnswers = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}
