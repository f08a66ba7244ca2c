package mcp_test

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/vault"
	"github.com/memhost/memhost/mcp"
	"github.com/memhost/memhost/server"
	"github.com/memhost/memhost/server/client"
)

// writePages writes notebook pages of h on disk, as an editor would.
func writePages(t *testing.T, h *host.Host, pages map[string]string) {
	t.Helper()
	for rel, text := range pages {
		p := filepath.Join(h.NotebookDir(), filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// toolError calls a tool that must fail and returns its error's text.
func toolError(t *testing.T, cs *mcpsdk.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res := call(t, cs, name, args)
	if !res.IsError {
		t.Fatalf("%s %v succeeded: %s", name, args, text(res))
	}
	return text(res)
}

// TestVaultTools: links lists out, back and unresolved links; mv renames a
// page and its links follow (links shows it); rollup writes a week's page
// from a daily log; prune refuses (naming the rollup tool) before it,
// dry-runs, then archives; bad arguments are tool errors naming them.
func TestVaultTools(t *testing.T) {
	h := openHome(t)
	old := time.Now().AddDate(0, 0, -200).Format(time.DateOnly)
	writePages(t, h, map[string]string{
		"knowledge/postgres.md":   "---\ntags: [database]\naliases: [PG]\n---\n# Postgres\n\nRuns [[staging-db]]; see [[Runbook#Cut-over|the cut-over]].\n",
		"knowledge/staging-db.md": "# Staging database\n\nPostgres 16.\n",
		"daily/" + old + ".md":    "# Daily Log — " + old + "\n\n## 11:30 — Migration plan\nAgreed the cut-over with Sarah.\n",
	})
	cs := connect(t, mcp.New(h, mcp.Options{}), nil)

	// links: out (one resolved, one not), unresolved, back.
	var lr memhost.LinksResponse
	res := call(t, cs, "links", map[string]any{"path": "knowledge/postgres.md", "unresolved": true})
	structured(t, res, &lr)
	if lr.Path != "knowledge/postgres.md" || len(lr.Out) != 2 || lr.Out[0].Page != "knowledge/staging-db.md" || lr.Out[1].Resolved ||
		len(lr.Unresolved) != 1 || lr.Unresolved[0].Target != "Runbook" || !slices.Equal(lr.Tags, []string{"database"}) {
		t.Fatalf("links: %+v", lr)
	}
	for _, want := range []string{"knowledge/postgres.md (aliases PG; tags database)", "line 7 [[staging-db]] -> knowledge/staging-db.md",
		"[[Runbook#Cut-over|the cut-over]] -> no page (unresolved)", "unresolved links in the notebook: 1"} {
		if !strings.Contains(text(res), want) {
			t.Errorf("links text lacks %q:\n%s", want, text(res))
		}
	}
	lr = memhost.LinksResponse{}
	structured(t, call(t, cs, "links", map[string]any{"path": "knowledge/staging-db"}), &lr)
	if len(lr.Back) != 1 || lr.Back[0].Page != "knowledge/postgres.md" || lr.Unresolved != nil {
		t.Fatalf("back links: %+v", lr)
	}
	var ur memhost.LinksResponse
	structured(t, call(t, cs, "links", map[string]any{"unresolved": true}), &ur)
	if ur.Path != "" || len(ur.Unresolved) != 1 {
		t.Fatalf("unresolved only: %+v", ur)
	}

	// mv: the page moves, the link to it is rewritten and still finds it.
	var mr memhost.MoveResponse
	res = call(t, cs, "mv", map[string]any{"from": "knowledge/staging-db.md", "to": "knowledge/databases/staging.md"})
	structured(t, res, &mr)
	if mr.To != "knowledge/databases/staging.md" || len(mr.Updated) != 1 || mr.Updated[0].Path != "knowledge/postgres.md" || mr.Updated[0].Links != 1 ||
		text(res) != "Renamed knowledge/staging-db.md to knowledge/databases/staging.md. Links updated in knowledge/postgres.md (1)." {
		t.Fatalf("mv: %+v %q", mr, text(res))
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "knowledge", "staging-db.md")); !os.IsNotExist(err) {
		t.Fatalf("the old page is still there: %v", err)
	}
	page, _ := os.ReadFile(filepath.Join(h.NotebookDir(), "knowledge", "postgres.md"))
	if strings.Contains(string(page), "[[staging-db]]") || !strings.HasPrefix(string(page), "---\ntags: [database]\naliases: [PG]\n---\n") {
		t.Fatalf("postgres.md after mv:\n%s", page)
	}
	structured(t, call(t, cs, "links", map[string]any{"path": "knowledge/databases/staging.md"}), &lr)
	if len(lr.Back) != 1 || lr.Back[0].Page != "knowledge/postgres.md" {
		t.Fatalf("back links after mv: %+v", lr)
	}

	// prune before the rollup: refused, naming the tool to call; the log
	// stays where it is.
	msg := toolError(t, cs, "prune", map[string]any{"olderThanDays": 90})
	t.Logf("prune before rollup: %s", msg)
	if !strings.Contains(msg, "nothing archived") || !strings.Contains(msg, "rollup tool") || !strings.Contains(msg, "daily/rollups/") {
		t.Fatalf("prune without a rollup: %q", msg)
	}
	logPath := filepath.Join(h.NotebookDir(), "daily", old+".md")
	if _, err := os.Stat(logPath); err != nil {
		t.Fatalf("a refused prune moved the log: %v", err)
	}

	// rollup of the log's week.
	var rr memhost.RollupResponse
	res = call(t, cs, "rollup", map[string]any{"period": "week", "date": old})
	structured(t, res, &rr)
	if !rr.Created || !rr.Changed || !slices.Equal(rr.Logs, []string{"daily/" + old + ".md"}) || rr.Entries != 1 ||
		!strings.HasPrefix(rr.Path, "daily/rollups/") || !strings.HasPrefix(text(res), "Created "+rr.Path) {
		t.Fatalf("rollup: %+v %q", rr, text(res))
	}
	if data, err := os.ReadFile(filepath.Join(h.NotebookDir(), filepath.FromSlash(rr.Path))); err != nil || !strings.Contains(string(data), "Agreed the cut-over with Sarah.") {
		t.Fatalf("rollup page: %v\n%s", err, data)
	}
	rr = memhost.RollupResponse{}
	structured(t, call(t, cs, "rollup", map[string]any{"period": "week", "date": old}), &rr)
	if rr.Created || rr.Changed {
		t.Fatalf("rollup again: %+v", rr)
	}

	// prune: a dry run changes nothing, then the log is archived.
	var pr memhost.PruneResponse
	res = call(t, cs, "prune", map[string]any{"olderThanDays": 90, "dryRun": true})
	structured(t, res, &pr)
	if !pr.DryRun || len(pr.Archived) != 1 || !strings.HasPrefix(text(res), "Would archive (dry run, nothing changed) 1 daily log") {
		t.Fatalf("prune dry run: %+v %q", pr, text(res))
	}
	if _, err := os.Stat(logPath); err != nil {
		t.Fatalf("a dry run moved the log: %v", err)
	}
	pr = memhost.PruneResponse{}
	res = call(t, cs, "prune", map[string]any{"olderThanDays": 90})
	structured(t, res, &pr)
	if pr.DryRun || len(pr.Archived) != 1 || pr.Archived[0].To != "daily/archive/"+old+".md" {
		t.Fatalf("prune: %+v %q", pr, text(res))
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "daily", "archive", old+".md")); err != nil {
		t.Fatalf("the log is not in the archive: %v", err)
	}
	if _, err := os.Stat(logPath); !os.IsNotExist(err) {
		t.Fatalf("the log is still in daily/: %v", err)
	}
	pr = memhost.PruneResponse{}
	structured(t, call(t, cs, "prune", map[string]any{"olderThanDays": 90}), &pr)
	if len(pr.Archived) != 0 {
		t.Fatalf("prune again: %+v", pr)
	}

	// Bad arguments: tool errors naming the argument; nothing changed.
	before := pagesOf(t, h)
	for _, tt := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"links", map[string]any{}, []string{"path", "unresolved"}},
		{"links", map[string]any{"path": "../config.yaml"}, []string{"path is outside", "inside the notebook"}},
		{"mv", map[string]any{"from": "/etc/passwd", "to": "knowledge/x.md"}, []string{"from: ", "outside"}},
		{"links", map[string]any{"path": "knowledge/nope.md"}, []string{"knowledge/nope.md", "pages in knowledge/"}},
		{"mv", map[string]any{"from": "knowledge/postgres.md"}, []string{"missing argument: to"}},
		{"mv", map[string]any{"from": "knowledge/postgres.md", "to": "../postgres.md"}, []string{"to", "outside"}},
		{"mv", map[string]any{"from": "knowledge/postgres.md", "to": "reference/contacts.md"}, []string{"to: ", "reference/contacts.md", "choose another name"}},
		{"mv", map[string]any{"from": "knowledge/nope.md", "to": "knowledge/yes.md"}, []string{"knowledge/nope.md"}},
		{"rollup", map[string]any{"period": "year"}, []string{"period: must be one of week, month, not year"}},
		{"rollup", map[string]any{"period": "week", "date": "last tuesday"}, []string{"date"}},
		{"prune", map[string]any{"olderThanDays": 0}, []string{"olderThanDays: must be at least 1"}},
		{"prune", map[string]any{"olderThanDays": "90d"}, []string{"olderThanDays", "integer"}},
		{"prune", map[string]any{"olderThanDays": 90, "delete": true}, []string{"delete"}},
	} {
		msg := toolError(t, cs, tt.tool, tt.args)
		t.Logf("%s %v: %s", tt.tool, tt.args, msg)
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s %v: error %q does not say %q", tt.tool, tt.args, msg, w)
			}
		}
	}
	if after := pagesOf(t, h); !slices.Equal(before, after) {
		t.Fatalf("refused calls changed the notebook: %v, then %v", before, after)
	}

	// Read-only: links is served, the writing tools are not.
	ro := connect(t, mcp.New(h, mcp.Options{ReadOnly: true}), nil)
	lr = memhost.LinksResponse{}
	structured(t, call(t, ro, "links", map[string]any{"path": "knowledge/postgres.md"}), &lr)
	if len(lr.Out) != 2 {
		t.Fatalf("read-only links: %+v", lr)
	}
	for tool, args := range map[string]map[string]any{
		"mv":     {"from": "knowledge/postgres.md", "to": "knowledge/pg.md"},
		"rollup": {"period": "month", "date": old},
		"prune":  {"olderThanDays": 1},
	} {
		if _, err := ro.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: tool, Arguments: args}); err == nil || !strings.Contains(err.Error(), tool) {
			t.Errorf("%s in read-only mode: %v", tool, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.NotebookDir(), "knowledge", "postgres.md")); err != nil {
		t.Fatalf("read-only mv moved the page: %v", err)
	}
}

// pagesOf lists the files of h's notebook with their contents.
func pagesOf(t *testing.T, h *host.Host) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(h.NotebookDir(), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(h.NotebookDir(), p)
		out = append(out, rel+":"+string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVaultToolsThroughServer: the tools on a *client.Client (as `memhost
// mcp` runs them while memhost serve runs): the same answers, and prune's
// refusal, which then arrives as the API's error, worded the same way.
func TestVaultToolsThroughServer(t *testing.T) {
	home := t.TempDir()
	old := time.Now().AddDate(0, 0, -200).Format(time.DateOnly)
	for rel, text := range map[string]string{
		"notebook/knowledge/postgres.md":   "# Postgres\n\nRuns [[staging-db]].\n",
		"notebook/knowledge/staging-db.md": "# Staging database\n",
		"notebook/daily/" + old + ".md":    "# Daily Log — " + old + "\n\n## 11:30 — Migration plan\nAgreed the cut-over.\n",
	} {
		p := filepath.Join(home, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	listen := ""
	ready, done := make(chan server.Info, 1), make(chan error, 1)
	go func() {
		done <- server.Run(ctx, server.RunOptions{Home: home, Listen: &listen, Getenv: func(string) string { return "" },
			Open: func(ctx context.Context) (*host.Host, error) {
				return host.Open(ctx, host.Options{Home: home, Config: config.Default()})
			},
			Ready: func(in server.Info) { ready <- in }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-ready:
	case err := <-done:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	c, err := client.Dial(home, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cs := connect(t, mcp.New(c, mcp.Options{}), nil)

	var lr memhost.LinksResponse
	structured(t, call(t, cs, "links", map[string]any{"path": "knowledge/staging-db.md"}), &lr)
	if len(lr.Back) != 1 || lr.Back[0].Page != "knowledge/postgres.md" {
		t.Fatalf("links: %+v", lr)
	}
	// The server's client hands back prune's refusal typed (the logs it
	// names travel in the error's "missing"), so the tool words it as in
	// process, without reading the error's text.
	day, err := time.Parse(time.DateOnly, old)
	if err != nil {
		t.Fatal(err)
	}
	week := vault.WeekOf(day).Path()
	want := fmt.Sprintf("nothing archived: some of those daily logs are in no up-to-date rollup. Write the rollups first with the rollup tool "+
		"(period: week, date: the week, e.g. %q), then call prune again. Rollups to write: %s (missing)", strings.TrimSuffix(path.Base(week), ".md"), week)
	if msg := toolError(t, cs, "prune", map[string]any{"olderThanDays": 90}); msg != want {
		t.Fatalf("prune before the rollup, through the server:\n got %q\nwant %q", msg, want)
	}
	var rr memhost.RollupResponse
	structured(t, call(t, cs, "rollup", map[string]any{"period": "month", "date": old}), &rr)
	var pr memhost.PruneResponse
	structured(t, call(t, cs, "prune", map[string]any{"olderThanDays": 90}), &pr)
	if len(pr.Archived) != 1 {
		t.Fatalf("prune through the server: %+v", pr)
	}
	var mr memhost.MoveResponse
	structured(t, call(t, cs, "mv", map[string]any{"from": "knowledge/staging-db.md", "to": "knowledge/staging.md"}), &mr)
	if len(mr.Updated) != 1 {
		t.Fatalf("mv through the server: %+v", mr)
	}
	if msg := toolError(t, cs, "mv", map[string]any{"from": "knowledge/staging.md", "to": "knowledge/postgres.md"}); !strings.HasPrefix(msg, "to: ") {
		t.Fatalf("mv onto a page, through the server: %q", msg)
	}
}

// TestHealthHistoryTool: the kept reports, newest first, with the checks
// that did not pass in the text; a negative limit is a tool error naming
// it.
func TestHealthHistoryTool(t *testing.T) {
	h := openHome(t)
	cs := connect(t, mcp.New(h, mcp.Options{ReadOnly: true}), nil)
	if got := text(call(t, cs, "health_history", nil)); got != "no health reports kept yet" {
		t.Fatalf("no history: %q", got)
	}
	if _, err := h.Health(context.Background(), memhost.HealthRequest{}); err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "health_history", map[string]any{"limit": 1})
	var hr memhost.HealthHistoryResponse
	structured(t, res, &hr)
	if len(hr.Reports) != 1 || hr.Reports[0].Timestamp == "" || !strings.Contains(text(res), string(hr.Reports[0].Overall)) {
		t.Fatalf("health_history: %+v\n%s", hr, text(res))
	}
	if res := call(t, cs, "health_history", map[string]any{"limit": -1}); !res.IsError || !strings.Contains(text(res), "limit") {
		t.Fatalf("a negative limit: %+v", res)
	}
}
