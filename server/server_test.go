package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/notebook"
	"github.com/memhost/memhost/server/client"
	"github.com/memhost/memhost/server/debug"
)

// running is a server started by Run on a temporary home.
type running struct {
	home string
	info Info
	done chan error
	stop context.CancelFunc
}

// start runs a real server (Run: lock, socket, TCP on listen, watcher)
// until the test ends. config.yaml, when not "", is written first.
func start(t *testing.T, home, listen, configYAML string, tweak ...func(*RunOptions)) *running {
	t.Helper()
	if configYAML != "" {
		os.MkdirAll(home, 0o755)
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(configYAML), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan Info, 1)
	opts := RunOptions{
		Home:   home,
		Listen: &listen,
		Open: func(ctx context.Context) (*host.Host, error) {
			cfg, err := config.Load(filepath.Join(home, "config.yaml"), nil)
			if err != nil {
				return nil, err
			}
			return host.Open(ctx, host.Options{Home: home, Config: cfg})
		},
		Ready:  func(in Info) { ready <- in },
		Getenv: func(string) string { return "" },
	}
	for _, f := range tweak {
		f(&opts)
	}
	r := &running{home: home, done: make(chan error, 1), stop: cancel}
	go func() { r.done <- Run(ctx, opts) }()
	select {
	case r.info = <-ready:
	case err := <-r.done:
		cancel()
		t.Fatalf("Run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return r
}

func (r *running) client(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.Dial(r.home, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// do sends a request over TCP and returns the status and body.
func do(t *testing.T, method, url, body string, header ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// errorOf decodes an error body.
func errorOf(t *testing.T, body string) wireError {
	t.Helper()
	var eb errorBody
	if err := json.Unmarshal([]byte(body), &eb); err != nil || eb.Error.Kind == "" {
		t.Fatalf("not an error body: %q", body)
	}
	return eb.Error
}

func TestServeLifecycle(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "")
	if r.info.PID != os.Getpid() || !strings.HasPrefix(r.info.URL, "http://127.0.0.1:") || r.info.Token {
		t.Fatalf("info = %+v", r.info)
	}
	fi, err := os.Stat(r.info.Socket)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket %s: %v, mode %v", r.info.Socket, err, fi.Mode())
	}
	if st, err := ReadState(home); err != nil || st.PID != r.info.PID || st.URL != r.info.URL {
		t.Fatalf("serve.json = %+v, %v", st, err)
	}

	// The socket and TCP serve the same API.
	c := r.client(t)
	ctx := context.Background()
	if _, err := c.Remember(ctx, memhost.RememberRequest{Text: "Sarah Chen - Phone: 555-1234"}); err != nil {
		t.Fatal(err)
	}
	rec, err := c.Recall(ctx, memhost.RecallRequest{Query: "sarah phone"})
	if err != nil || len(rec.Results.Notebook) != 1 || rec.Results.Notebook[0].Path != "reference/contacts.md" {
		t.Fatalf("recall through the socket: %+v, %v", rec, err)
	}
	code, body, hdr := do(t, "POST", r.info.URL+"/api/v1/recall", `{"query":"sarah phone"}`)
	if code != 200 || !strings.Contains(body, `"path":"reference/contacts.md"`) || hdr.Get(VersionHeader) == "" {
		t.Fatalf("recall over TCP: %d %s", code, body)
	}

	// Errors keep their kind, field and page.
	_, err = c.Get(ctx, memhost.GetRequest{Path: "reference/nope.md"})
	var pe *notebook.PathError
	if fault.KindOf(err) != fault.NotFound || !errors.As(err, &pe) || pe.Path != "reference/nope.md" {
		t.Fatalf("get of a missing page through the client: %v (kind %s)", err, fault.KindOf(err))
	}
	if _, err := c.Ingest(ctx, memhost.IngestRequest{Paths: []string{"/nonexistent/x.jsonl"}}); fault.KindOf(err) != fault.NotFound || fault.FieldOf(err) != "paths" {
		t.Errorf("ingest of a missing file: %v", err)
	}
	_, err = c.Recall(ctx, memhost.RecallRequest{Query: "x", Sources: []string{"mail"}})
	if fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "sources" {
		t.Fatalf("bad source: %v kind %s field %q", err, fault.KindOf(err), fault.FieldOf(err))
	}

	// One server per home: a second one names the first.
	err = Run(ctx, RunOptions{Home: home, Open: func(context.Context) (*host.Host, error) {
		t.Error("a second server opened the home")
		return nil, errors.New("no")
	}})
	if fault.KindOf(err) != fault.Conflict || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", r.info.PID)) {
		t.Fatalf("second server: %v", err)
	}
	// A port in use is a clear error.
	addr := strings.TrimPrefix(r.info.URL, "http://")
	err = Run(ctx, RunOptions{Home: t.TempDir(), Listen: &addr, Open: func(ctx context.Context) (*host.Host, error) {
		return host.Open(ctx, host.Options{Home: t.TempDir(), Config: config.Default()})
	}})
	if fault.KindOf(err) != fault.Conflict || fault.FieldOf(err) != "listen" || !strings.Contains(err.Error(), addr+" is in use") {
		t.Fatalf("port in use: %v", err)
	}

	// Stop through the API: Run returns, the socket and state file go.
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run returned %v", err)
		}
		r.done <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop")
	}
	if _, err := os.Stat(r.info.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind: %v", err)
	}
	if _, err := ReadState(home); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("serve.json left behind: %v", err)
	}
	if _, err := client.Dial(home, nil); !errors.Is(err, client.ErrNoServer) {
		t.Errorf("Dial after stop: %v", err)
	}
}

// TestStaleSocket: a socket file left by a killed server is not a server,
// and the next server replaces it.
func TestStaleSocket(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "brain"), 0o755)
	ln, err := net.Listen("unix", SocketPath(home))
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close() // the file stays, nobody listens: what SIGKILL leaves
	if _, err := os.Stat(SocketPath(home)); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Dial(home, nil); !errors.Is(err, client.ErrNoServer) {
		t.Fatalf("Dial on a stale socket: %v", err)
	}
	r := start(t, home, "", "")
	if _, err := r.client(t).Status(context.Background(), memhost.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
}

// TestBadRequests: every kind of bad request gets its status and a JSON
// error naming the problem, and changes nothing.
func TestBadRequests(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "", func(o *RunOptions) { o.MaxBody = 1 << 10 })
	u := r.info.URL
	os.MkdirAll(filepath.Join(home, "notebook", "reference"), 0o755)
	os.WriteFile(filepath.Join(home, "notebook", "reference", "keep.md"), []byte("# Keep\n"), 0o644)
	os.WriteFile(filepath.Join(home, "secret.md"), []byte("# Secret\n"), 0o644)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		kind                     string
		field                    string
		header                   []string
	}{
		{"malformed JSON", "POST", "/api/v1/recall", `{"query": "x"`, 400, "bad-input", "", nil},
		{"not JSON", "POST", "/api/v1/remember", `text=hello`, 400, "bad-input", "", nil},
		{"wrong type", "POST", "/api/v1/recall", `{"query": "x", "maxResults": "ten"}`, 400, "bad-input", "maxResults", nil},
		{"unknown field", "POST", "/api/v1/recall", `{"query": "x", "limit": 3}`, 400, "bad-input", "limit", nil},
		{"two values", "POST", "/api/v1/recall", `{"query": "x"} {"query": "y"}`, 400, "bad-input", "", nil},
		{"huge body", "POST", "/api/v1/remember", `{"text": "` + strings.Repeat("a", 2<<10) + `"}`, 413, "too-large", "", nil},
		{"empty query", "POST", "/api/v1/recall", `{}`, 400, "bad-input", "query", nil},
		{"unknown route", "GET", "/api/v1/nope", ``, 404, "not-found", "", nil},
		{"wrong method", "DELETE", "/api/v1/recall", ``, 404, "not-found", "", nil},
		{"other version", "POST", "/api/v1/status", `{}`, 409, "conflict", "version", []string{VersionHeader, "0.0.1"}},
		{"other environment", "POST", "/api/v1/status", `{}`, 409, "conflict", "env", []string{EnvHeader, "0123456789abcdef"}},
		{"foreign Host", "GET", "/api/debug/memory/status", ``, 403, "outside", "Host", []string{"Host", "evil.example:4321"}},
		{"foreign Origin", "POST", "/api/v1/remember", `{"text": "x"}`, 403, "outside", "Origin", []string{"Origin", "http://evil.example"}},
		// Paths outside the notebook, through every endpoint that takes one.
		{"get ..", "POST", "/api/v1/get", `{"path": "../secret.md"}`, 403, "outside", "", nil},
		{"get absolute", "POST", "/api/v1/get", `{"path": "/etc/passwd"}`, 403, "outside", "", nil},
		{"write ..", "POST", "/api/v1/write", `{"path": "../x.md", "text": "x"}`, 403, "outside", "", nil},
		{"rm ..", "POST", "/api/v1/rm", `{"path": "../secret.md"}`, 403, "outside", "", nil},
		{"remember file ..", "POST", "/api/v1/remember", `{"text": "x", "file": "../../secret"}`, 400, "bad-input", "file", nil},
		{"debug get ..", "GET", "/api/debug/notebook/..%2fsecret.md", ``, 403, "outside", "", nil},
		{"debug write ..", "POST", "/api/debug/notebook/..%2f..%2fx.md", `{"content": "x"}`, 403, "outside", "", nil},
		{"debug delete ..", "DELETE", "/api/debug/notebook/..%2fsecret.md", ``, 403, "outside", "", nil},
		{"debug delete missing", "DELETE", "/api/debug/notebook/reference/nope.md", ``, 404, "not-found", "", nil},
		{"session id", "POST", "/api/v1/session/append", `{"session": "../x", "role": "user", "text": "x"}`, 400, "bad-input", "session", nil},
		{"search without q", "GET", "/api/debug/memory/search", ``, 400, "bad-input", "query", nil},
		{"search bad maxResults", "GET", "/api/debug/memory/search?q=x&maxResults=many", ``, 400, "bad-input", "maxResults", nil},
		{"unknown rebuild", "GET", "/api/debug/memory/rebuild/rebuild-99", ``, 404, "not-found", "id", nil},
		{"invalid UTF-8", "POST", "/api/v1/remember", "{\"text\": \"caf\xe9 au lait\"}", 400, "bad-input", "", nil},
		{"inject empty content", "POST", "/api/debug/brain/inject-turn", `{"session": "s", "role": "user", "content": " "}`, 400, "bad-input", "content", nil},
		// Requests naming files for the server to read: the socket only.
		{"ingest over TCP", "POST", "/api/v1/session/ingest", `{"paths": ["/etc/hostname"]}`, 403, "outside", "", nil},
		{"hook over TCP", "POST", "/api/v1/hook", `{"event": "pre-compact", "payload": {"transcript_path": "/etc/hostname"}}`, 403, "outside", "", nil},
		{"model path over TCP", "POST", "/api/v1/models/pull", `{"model": "/etc/hostname"}`, 403, "outside", "", nil},
		{"hidden model name over TCP", "POST", "/api/v1/models/pull", `{"model": ".secret"}`, 403, "outside", "", nil},
		{"plugins use over TCP", "POST", "/api/v1/plugins/use", `{"name": "hello"}`, 403, "outside", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, _ := do(t, tc.method, u+tc.path, tc.body, tc.header...)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %s", code, tc.status, body)
			}
			e := errorOf(t, body)
			if string(e.Kind) != tc.kind || e.Field != tc.field || e.Message == "" {
				t.Errorf("error = %+v, want kind %s field %q", e, tc.kind, tc.field)
			}
			if strings.Count(strings.TrimSpace(body), "\n") != 0 {
				t.Errorf("error body is not one line: %q", body)
			}
		})
	}
	// Nothing changed: the secret is there, no page was written.
	if b, err := os.ReadFile(filepath.Join(home, "secret.md")); err != nil || string(b) != "# Secret\n" {
		t.Errorf("secret.md: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(home, "x.md")); err == nil {
		t.Error("a write outside the notebook landed")
	}
	if pages := pagesIn(t, home); len(pages) != 1 || pages[0] != "reference/keep.md" {
		t.Errorf("notebook pages = %v, want reference/keep.md only", pages)
	}
}

// TestAuthToken: an address that is not loopback needs the bearer token;
// without it a request gets 401 and nothing else.
func TestAuthToken(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "0.0.0.0:0", "")
	if !r.info.Token {
		t.Fatal("a server on 0.0.0.0 does not ask for a token")
	}
	tokFile := filepath.Join(home, "brain", "serve.token")
	fi, err := os.Stat(tokFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", err, fi)
	}
	b, _ := os.ReadFile(tokFile)
	token := strings.TrimSpace(string(b))
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(r.info.URL, "http://"))
	u := "http://127.0.0.1:" + port
	for _, h := range [][]string{nil, {"Authorization", "Bearer wrong"}, {"Authorization", token}} {
		code, body, hdr := do(t, "POST", u+"/api/v1/remember", `{"text": "leak"}`, h...)
		if code != 401 || errorOf(t, body).Kind != KindUnauthorized || hdr.Get("WWW-Authenticate") == "" {
			t.Errorf("with %v: %d %s", h, code, body)
		}
	}
	if pages := pagesIn(t, home); len(pages) != 0 {
		t.Errorf("an unauthorised remember wrote %v", pages)
	}
	for _, scheme := range []string{"Bearer ", "bearer "} {
		code, body, _ := do(t, "POST", u+"/api/v1/status", `{}`, "Authorization", scheme+token)
		if code != 200 {
			t.Errorf("with the token (%q): %d %s", scheme, code, body)
		}
	}
	// The socket needs no token.
	if _, err := r.client(t).Status(context.Background(), memhost.StatusRequest{}); err != nil {
		t.Error(err)
	}

	// A token file named in config.yaml is asked for on loopback too.
	home3 := t.TempDir()
	tf := filepath.Join(home3, "tok")
	os.WriteFile(tf, []byte(strings.Repeat("t", 32)), 0o600)
	// Named relative: in the home, whatever the server's folder.
	r3 := start(t, home3, "127.0.0.1:0", "server:\n  tokenFile: tok\n")
	if code, body, _ := do(t, "POST", r3.info.URL+"/api/v1/status", `{}`); code != 401 || !r3.info.Token {
		t.Errorf("loopback with server.tokenFile, no token: %d %s", code, body)
	}
	if code, body, _ := do(t, "POST", r3.info.URL+"/api/v1/status", `{}`, "Authorization", "Bearer "+strings.Repeat("t", 32)); code != 200 {
		t.Errorf("the token of the home's file: %d %s", code, body)
	}

	// A token file others can read is refused. Outside the home: one
	// directly in it is made private when the home is opened.
	home2 := t.TempDir()
	loose := filepath.Join(t.TempDir(), "token")
	os.WriteFile(loose, []byte(strings.Repeat("x", 32)), 0o644)
	listen := "0.0.0.0:0"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a regression serves: it fails, not hangs
	defer cancel()
	err = Run(ctx, RunOptions{Home: home2, Listen: &listen, TokenFile: loose, Open: func(ctx context.Context) (*host.Host, error) {
		return host.Open(ctx, host.Options{Home: home2, Config: config.Default()})
	}})
	if fault.KindOf(err) != fault.BadInput || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("loose token file: %v", err)
	}
}

// TestEventsAndDebug: the event stream reports writes and syncs of edits
// made behind memhost's back; the debug endpoints answer in the shapes
// of docs/api.md; a rebuild runs as a job.
func TestEventsAndDebug(t *testing.T) {
	home := t.TempDir()
	r := start(t, home, "127.0.0.1:0", "memory:\n  sync:\n    watchDebounceMs: 50\n")
	c := r.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan Event, 64)
	go c.Events(ctx, func(ev Event) { events <- ev })
	// The stream is open once the server counts it; wait for it.
	waitEvent := func(typ, contains string) Event {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.Type == typ && strings.Contains(string(ev.Data), contains) {
					return ev
				}
			case <-deadline:
				t.Fatalf("no %s event with %q", typ, contains)
			}
		}
	}
	waitEvent("ready", "")
	u := r.info.URL
	code, body, _ := do(t, "POST", u+"/api/debug/notebook/reference/contacts.md", `{"content": "# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n"}`)
	if code != 200 {
		t.Fatalf("debug write: %d %s", code, body)
	}
	waitEvent("write", "reference/contacts.md")
	os.WriteFile(filepath.Join(home, "notebook", "reference", "editor.md"), []byte("# Editor\nzeppelin\n"), 0o644)
	waitEvent("sync", "reference/editor.md")

	code, body, _ = do(t, "GET", u+"/api/debug/memory/search?q=sarah+phone&sources=notebook,daily", ``)
	var search struct {
		Query   string                        `json:"query"`
		Results map[string][]debug.SeedResult `json:"results"`
		Timing  map[string]float64            `json:"timing"`
	}
	if code != 200 || json.Unmarshal([]byte(body), &search) != nil || len(search.Results["notebook"]) != 1 ||
		search.Results["notebook"][0].FilePath != "reference/contacts.md" || *search.Results["notebook"][0].Heading != "## Sarah Chen" {
		t.Fatalf("debug search: %d %s", code, body)
	}
	if _, ok := search.Timing["totalMs"]; !ok {
		t.Errorf("search timing: %s", body)
	}
	code, body, _ = do(t, "GET", u+"/api/debug/memory/status", ``)
	var status map[string]any
	json.Unmarshal([]byte(body), &status)
	for _, k := range []string{"indexed", "lastSync", "files", "chunks", "dbSizeBytes", "watcherActive"} {
		if _, ok := status[k]; !ok {
			t.Errorf("status lacks %q: %s", k, body)
		}
	}
	if code != 200 || status["watcherActive"] != true {
		t.Errorf("status: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", u+"/api/debug/notebook/pages", ``)
	if code != 200 || !strings.Contains(body, `"reference/editor.md"`) {
		t.Errorf("pages: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", u+"/api/debug/notebook/reference/contacts.md", ``)
	if code != 200 || !strings.Contains(body, `555-1234`) {
		t.Errorf("get page: %d %s", code, body)
	}

	// A turn injected is stored and searchable when the answer comes.
	code, body, _ = do(t, "POST", u+"/api/debug/brain/inject-turn", `{"session": "s1", "role": "user", "content": "Remember that Sarah's new number is 555-4321"}`)
	if code != 200 {
		t.Fatalf("inject: %d %s", code, body)
	}
	cs, err := c.ConversationSearch(context.Background(), memhost.ConversationSearchRequest{Query: "555-4321"})
	if err != nil || len(cs.Results) != 1 || cs.Results[0].Session != "s1" {
		t.Fatalf("the injected turn: %+v %v", cs, err)
	}
	code, body, _ = do(t, "POST", u+"/api/debug/memory/simulate-compaction", `{"session": "s1"}`)
	if code != 200 || !strings.Contains(body, `"flushDue":true`) {
		t.Errorf("simulate-compaction: %d %s", code, body)
	}

	// Rebuild: 202 at once, then the job by long poll and by its stream.
	code, body, _ = do(t, "POST", u+"/api/debug/memory/rebuild", ``)
	var started struct {
		Started bool   `json:"started"`
		ID      string `json:"id"`
	}
	if code != 202 || json.Unmarshal([]byte(body), &started) != nil || !started.Started {
		t.Fatalf("rebuild: %d %s", code, body)
	}
	code, body, _ = do(t, "GET", u+"/api/debug/memory/rebuild/"+started.ID+"?wait=1", ``)
	var j debug.Job
	if code != 200 || json.Unmarshal([]byte(body), &j) != nil || !j.Completed || j.Result == nil || j.Result.FilesScanned != 3 {
		t.Fatalf("rebuild job: %d %s", code, body)
	}
	resp, err := http.Get(u + "/api/debug/memory/rebuild/" + started.ID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var sawCompleted bool
	for sc.Scan() {
		if sc.Text() == "event: completed" {
			sawCompleted = true
		}
	}
	resp.Body.Close()
	if !sawCompleted {
		t.Error("the rebuild's event stream did not say completed")
	}
	waitEvent("rebuild", `"completed"`)
}

// TestClientGoneMidRequest: a client that disconnects during a long
// request (a model download) cancels it; the server keeps serving.
func TestClientGoneMidRequest(t *testing.T) {
	started := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000000")
		w.WriteHeader(200)
		close(started)
		buf := bytes.Repeat([]byte{0}, 1<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(buf); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(10 * time.Millisecond)
		}
	}))
	defer slow.Close()
	home := t.TempDir()
	r := start(t, home, "", "")
	c := r.client(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.PullModel(ctx, memhost.PullModelRequest{Model: slow.URL + "/m.gguf"})
		errc <- err
	}()
	<-started
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled pull: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled pull did not return")
	}
	// The server still answers, and the download stopped (the partial
	// file stops growing).
	if _, err := r.client(t).Status(context.Background(), memhost.StatusRequest{}); err != nil {
		t.Fatal(err)
	}
	size := func() int64 {
		var n int64
		filepath.Walk(filepath.Join(home, "models"), func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				n += fi.Size()
			}
			return nil
		})
		return n
	}
	a := size()
	time.Sleep(300 * time.Millisecond)
	if b := size(); b != a {
		t.Errorf("the download went on after the client left: %d → %d bytes", a, b)
	}
}

// pagesIn lists the files of home's notebook.
func pagesIn(t *testing.T, home string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(home, "notebook")
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// TestHubLagged: a stream that falls behind loses the oldest events and is
// told so with a "lagged" event.
func TestHubLagged(t *testing.T) {
	h := newHub()
	c := h.subscribe()
	for i := range 100 {
		h.publish("write", i)
	}
	var n, lagged int
	for len(c) > 0 {
		if ev := <-c; ev.Type == "lagged" {
			lagged++
		} else {
			n++
		}
	}
	if lagged == 0 || n+lagged > streamBuffer {
		t.Errorf("%d events and %d lagged from 100 into a buffer of %d", n, lagged, streamBuffer)
	}
	h.publish("write", "after")
	if ev := <-c; ev.Type != "write" || string(ev.Data) != `"after"` {
		t.Errorf("after draining: %+v", ev)
	}
}

// TestUmaskKeptWhenServersStartTogether: servers starting at once in one
// process leave the process's umask as it was. Each sets 0077 while it
// binds its socket; restoring one another's, they once left 0077 behind,
// and TestAuthToken's "loose" token file, written 0644 after, was 0600
// (the server it should have refused served until the test timed out).
func TestUmaskKeptWhenServersStartTogether(t *testing.T) {
	before := syscall.Umask(0o022)
	syscall.Umask(before)
	var wg sync.WaitGroup
	for range 8 {
		home := t.TempDir()
		wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			err := Run(ctx, RunOptions{Home: home, Listen: new(""), Getenv: func(string) string { return "" },
				Ready: func(Info) { cancel() }, // started: stop at once
				Open: func(ctx context.Context) (*host.Host, error) {
					return host.Open(ctx, host.Options{Home: home, Config: config.Default()})
				}})
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	wg.Wait()
	after := syscall.Umask(before)
	if after != before {
		t.Errorf("umask after 8 servers started together: %04o, want %04o", after, before)
	}
}
