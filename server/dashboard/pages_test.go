package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/host/health/history"
	"github.com/memhost/memhost/server/dashboard"
)

// noon is the fixed "now" of the handler tests: the dashboard's "today"
// comes from the host's clock, never the machine's.
var noon = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

// openHome writes pages and a transcript into a new home and opens it in
// UTC with the clock now, synced (keyword search: no plugin).
func openHome(t testing.TB, pages map[string]string, now time.Time) *host.Host {
	t.Helper()
	ctx := context.Background()
	home := t.TempDir()
	writeHome(t, home, pages, []map[string]any{
		{"id": "t1", "type": "message", "role": "user", "content": "The staging database password rotates every month.", "timestamp": "2026-11-20T09:00:00Z"},
		{"id": "c1", "type": "compaction", "content": "Summary: the user told the agent about the staging password rotation.", "timestamp": "2026-11-20T10:00:00Z"},
	})
	cfg := config.Default()
	cfg.Timezone = "UTC"
	cfg.Memory.Embedding.Plugin = ""
	h, err := host.Open(ctx, host.Options{Home: home, Config: cfg, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if _, err := h.Init(ctx, memhost.InitRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	return h
}

var (
	// What a template that failed half-way leaves in a page.
	templateError = regexp.MustCompile(`template: |can't evaluate|error calling|executing "|wrong type for value|<p class=error>`)
	// A count of one with a plural noun ("1 files").
	wrongPlural = regexp.MustCompile(`\b1 (files|pages|entries|compactions|flush receipts|chunks|turns|sessions|results|days|models|vectors|dims|dimensions|tokens)\b`)
	tags        = regexp.MustCompile(`(?s)<[^>]*>`)
	hrefs       = regexp.MustCompile(`href="(/[^"#]*)`)
	forms       = regexp.MustCompile(`(?s)<form([^>]*)>(.*?)</form>`)
	inputs      = regexp.MustCompile(`<input([^>]*)>`)
)

func attr(tag, name string) (string, bool) {
	m := regexp.MustCompile(`\b` + name + `(?:="([^"]*)")?`).FindStringSubmatch(tag)
	if m == nil {
		return "", false
	}
	return html.UnescapeString(m[1]), true
}

// checkPage fails the test unless a page answered 200 and is whole: no
// template error in it, the footer's closing tags at its end, and no count
// of one with a plural noun in its text ("1 files").
func checkPage(t *testing.T, target string, code int, body string) {
	t.Helper()
	if code != http.StatusOK {
		t.Errorf("GET %s: %d\n%s", target, code, body)
		return
	}
	if m := templateError.FindString(body); m != "" {
		t.Errorf("GET %s shows a template error (%q):\n%s", target, m, body)
	}
	if !strings.HasSuffix(strings.TrimSpace(body), "</main>\n</body>\n</html>") {
		t.Errorf("GET %s: the page is cut off:\n%s", target, body)
	}
	text := html.UnescapeString(tags.ReplaceAllString(body, " "))
	if m := wrongPlural.FindString(strings.Join(strings.Fields(text), " ")); m != "" {
		t.Errorf("GET %s says %q", target, m)
	}
}

// TestPagesRender opens every dashboard page reachable from the home (the
// top sections, each page, session and folder they link to) and submits
// every query form on each (search, search with sessions, conversation
// search), with a query that has results: each answers 200 and is whole.
func TestPagesRender(t *testing.T) {
	pages := map[string]string{
		"reference/contacts.md": demoPages["reference/contacts.md"],
		"lists/shopping.md":     demoPages["lists/shopping.md"],
		"knowledge/facts.md":    "# Facts\n\n## Staging\n- Staging deploys every Friday.\n",
		"daily/2026-11-20.md":   demoPages["daily/2026-11-20.md"],
		"scratch.md":            demoPages["scratch.md"],
	}
	h := openHome(t, pages, noon)
	d := dashboard.New(h)
	seen := map[string]bool{}
	queue := []string{"/", "/ui/notebook", "/ui/search", "/ui/sessions", "/ui/settings"}
	submitted := map[string]bool{}
	for len(queue) > 0 && len(seen) < 300 {
		target := queue[0]
		queue = queue[1:]
		if seen[target] {
			continue
		}
		seen[target] = true
		code, body := fetchUI(t, d, target)
		checkPage(t, target, code, body)
		for _, m := range hrefs.FindAllStringSubmatch(body, -1) {
			u := html.UnescapeString(m[1])
			if (u == "/" || strings.HasPrefix(u, "/ui/")) && !strings.HasPrefix(u, "/ui/static/") && !strings.HasPrefix(u, "/ui/api/") {
				queue = append(queue, u)
			}
		}
		for _, f := range forms.FindAllStringSubmatch(body, -1) {
			action, ok := attr(f[1], "action")
			if !ok {
				continue // a form the script sends (new page, pull, use)
			}
			q := url.Values{}
			for _, in := range inputs.FindAllStringSubmatch(f[2], -1) {
				name, _ := attr(in[1], "name")
				if name == "" {
					continue
				}
				switch typ, _ := attr(in[1], "type"); typ {
				case "checkbox":
					v, ok := attr(in[1], "value")
					if !ok {
						v = "on"
					}
					q.Set(name, v)
				case "hidden":
					v, _ := attr(in[1], "value")
					q.Set(name, v)
				default:
					q.Set(name, "staging")
				}
			}
			sub := action + "?" + q.Encode()
			if seen[sub] {
				continue
			}
			seen[sub] = true
			submitted[action] = true
			code, body := fetchUI(t, d, sub)
			checkPage(t, sub, code, body)
			if !strings.Contains(body, "staging") && !strings.Contains(body, "Staging") {
				t.Errorf("GET %s finds nothing:\n%s", sub, body)
			}
		}
	}
	for _, want := range []string{"/ui/search", "/ui/sessions"} {
		if !submitted[want] {
			t.Errorf("no form submits to %s (submitted %v)", want, submitted)
		}
	}
	for _, want := range []string{"/ui/page/reference/contacts.md", "/ui/session/demo", "/ui/notebook?dir=daily"} {
		if !seen[want] {
			t.Errorf("%s was not reached from the home", want)
		}
	}
}

// TestConversationSearchWhole: a conversation search with results shows
// them and, below, the whole list of sessions.
func TestConversationSearchWhole(t *testing.T) {
	d := dashboard.New(openHome(t, map[string]string{"lists/todo.md": "# To do\n"}, noon))
	code, body := fetchUI(t, d, "/ui/sessions?q=staging+password")
	checkPage(t, "/ui/sessions?q=staging+password", code, body)
	for _, want := range []string{`id="conv-results"`, "<mark>staging</mark>", `<table class="files" id="sessions">`, `<a href="/ui/session/demo">demo</a>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the conversation search lacks %q:\n%s", want, body)
		}
	}
}

// TestRenderFailure: a page whose template fails half-way answers 500
// with one clear message, never 200 with half a page.
func TestRenderFailure(t *testing.T) {
	d := dashboard.New(openHome(t, map[string]string{"lists/todo.md": "# To do\n"}, noon))
	rec := httptest.NewRecorder()
	// A body the sessions template cannot read: it fails after the header.
	dashboard.RenderForTest(d, rec, httptest.NewRequest("GET", "/ui/sessions", nil), "sessions.html", 42)
	body := rec.Body.String()
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status %d, want 500:\n%s", rec.Code, body)
	}
	if !strings.Contains(body, `id="error"`) || !strings.Contains(body, "sessions.html could not be drawn") {
		t.Errorf("the answer does not say what failed:\n%s", body)
	}
	if strings.Contains(body, "Search conversations") || strings.Count(body, "<html") != 1 || !strings.HasSuffix(strings.TrimSpace(body), "</html>") {
		t.Errorf("the answer holds part of the failed page:\n%s", body)
	}
}

// TestFragmentFailure: a fragment whose template fails (the search
// results, which search as you type puts in place of the old ones)
// answers 500 with one short error element saying what failed: no page
// around it, no JSON, nothing of the failed fragment.
func TestFragmentFailure(t *testing.T) {
	d := dashboard.New(openHome(t, map[string]string{"lists/todo.md": "# To do\n"}, noon))
	rec := httptest.NewRecorder()
	// Data the results template cannot read: it fails at its first line.
	dashboard.FragmentForTest(d, rec, "results", 42)
	body := strings.TrimSpace(rec.Body.String())
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status %d, want 500:\n%s", rec.Code, body)
	}
	if got, want := rec.Header().Get("Content-Type"), "text/html; charset=utf-8"; got != want {
		t.Errorf("Content-Type %q, want %q", got, want)
	}
	if !strings.HasPrefix(body, `<p class="error" id="fragment-error"`) || !strings.HasSuffix(body, "</p>") || strings.Count(body, "<") != 2 {
		t.Errorf("the answer is not one error element:\n%s", body)
	}
	if !strings.Contains(body, "results could not be drawn") {
		t.Errorf("the answer does not say what failed:\n%s", body)
	}
	for _, bad := range []string{"<html", "<main", "<header", `"error":`, "search-mode", "NOTEBOOK"} {
		if strings.Contains(body, bad) {
			t.Errorf("the answer holds %q:\n%s", bad, body)
		}
	}
}

// TestHomeLatestDaily: the home's "Latest" is the latest daily page
// (daily/YYYY-MM-DD.md), never a weekly or monthly rollup
// (daily/rollups/2026-W47.md) nor an archived day, and "today" is the
// host's today.
func TestHomeLatestDaily(t *testing.T) {
	pages := map[string]string{
		"daily/2026-11-19.md":         "# 2026-11-19\n",
		"daily/2026-11-20.md":         "# 2026-11-20\n",
		"daily/notes.md":              "# Notes\n",
		"daily/rollups/2026-W47.md":   "# Week 47\n",
		"daily/rollups/2026-11.md":    "# November\n",
		"daily/archive/2026-10-01.md": "# 2026-10-01\n",
	}
	for _, tc := range []struct {
		now  time.Time
		want string
	}{
		{noon, "Latest: 2026-11-20 (today)"},
		{noon.Add(24 * time.Hour), "Latest: 2026-11-20<"},
		// Late on the 19th in UTC-10 is the 20th in the home's zone (UTC).
		{time.Date(2026, 11, 19, 20, 0, 0, 0, time.FixedZone("HST", -10*3600)), "Latest: 2026-11-20 (today)"},
	} {
		d := dashboard.New(openHome(t, pages, tc.now))
		code, body := fetchUI(t, d, "/")
		checkPage(t, "/", code, body)
		if !strings.Contains(body, tc.want) {
			t.Errorf("now %s: the home lacks %q:\n%s", tc.now, tc.want, body)
		}
	}
}

// TestCountsOfOne: a home with one of everything (one page of one chunk,
// a transcript with one compaction and one flush receipt) says "1 file",
// "1 compaction", never "1 files" (checkPage), on every screen.
func TestCountsOfOne(t *testing.T) {
	d := dashboard.New(openHome(t, map[string]string{"lists/todo.md": "# To do\n\n- staging\n"}, noon))
	wants := map[string][]string{
		"/":                      {"1 file<"},
		"/ui/settings":           {"1 file,"},
		"/ui/session/demo":       {"1 compaction ", "1 flush receipt "},
		"/ui/search?q=staging":   {"NOTEBOOK (1)"},
		"/ui/sessions?q=staging": {"SESSIONS ("},
	}
	for _, target := range []string{"/", "/ui/notebook", "/ui/notebook?dir=lists", "/ui/page/lists/todo.md", "/ui/search?q=staging", "/ui/search?q=staging&sessions=1", "/ui/sessions", "/ui/sessions?q=staging", "/ui/session/demo", "/ui/settings"} {
		code, body := fetchUI(t, d, target)
		checkPage(t, target, code, body)
		for _, want := range wants[target] {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s lacks %q:\n%s", target, want, body)
			}
		}
	}
}

// sarahChen is an entity page as host/facts writes it (frontmatter,
// facts with [key:: value] fields and block ids), with Dataview's line
// form (key:: value) in a list item and a paragraph, and a rule below.
const sarahChen = `---
title: Sarah Chen
aliases:
    - Sarah
tags:
    - entity
created: 2026-11-20
updated: 2026-11-23
---
# Sarah Chen

## works at
- ~~[[techflow]]~~ [seen:: 2026-11-20] [until:: 2026-11-23] [source:: chat-1 turn 1a2b3c4d5e6f] ^f3c9a01
- [[acme-corp]] [confidence:: 0.9] [seen:: 2026-11-23] [supersedes:: f3c9a01] ^f7e1b22

## notes
- works at:: [[acme-corp]]

status:: active
team lead:: yes

---
Met at the conference.
`

// TestSearchShowsFacts: the dashboard's search shows the FACTS group
// recall answers with, first, each fact linking to its line of the
// entity's page.
func TestSearchShowsFacts(t *testing.T) {
	d := dashboard.New(openHome(t, map[string]string{"knowledge/entities/sarah-chen.md": sarahChen}, noon))
	code, body := fetchUI(t, d, "/ui/search?q=sarah+works+at")
	checkPage(t, "/ui/search", code, body)
	facts := strings.Index(body, `data-group="FACTS"`)
	notebook := strings.Index(body, `data-group="NOTEBOOK"`)
	if facts < 0 || notebook < facts {
		t.Fatalf("no FACTS group before NOTEBOOK:\n%s", body)
	}
	group := body[facts:notebook]
	if !strings.Contains(group, "</mark>: [[acme-corp]]") || !strings.Contains(group, `href="/ui/page/knowledge/entities/sarah-chen.md#L`) {
		t.Errorf("the FACTS group:\n%s", group)
	}
}

// TestSnippetsRenderFields: a search's snippets show Dataview fields as
// the page view does (a key label and its value, the query's words still
// marked) and no block id, not the raw "[seen:: 2026-11-20] ^f3c9a01".
func TestSnippetsRenderFields(t *testing.T) {
	d := dashboard.New(openHome(t, map[string]string{"knowledge/entities/sarah-chen.md": sarahChen}, noon))
	code, body := fetchUI(t, d, "/ui/search?q=techflow")
	checkPage(t, "/ui/search", code, body)
	_, snippet, ok := strings.Cut(body, `<p class="snippet">`)
	snippet, _, _ = strings.Cut(snippet, "</p>")
	if !ok {
		t.Fatalf("no snippet in:\n%s", body)
	}
	for _, want := range []string{
		`<span class="field"><span class="field-key">seen</span> <span class="field-value">2026-11-20</span></span>`,
		`<span class="field"><span class="field-key">source</span> <span class="field-value">chat-1 turn 1a2b3c4d5e6f</span></span>`,
		`<mark>techflow</mark>`,
	} {
		if !strings.Contains(snippet, want) {
			t.Errorf("the snippet lacks %q:\n%s", want, snippet)
		}
	}
	for _, bad := range []string{"::", "^f3c9a01", "^f7e1"} {
		if strings.Contains(snippet, bad) {
			t.Errorf("the snippet shows %q:\n%s", bad, snippet)
		}
	}
	// The page view hides block ids too.
	_, page := fetchUI(t, d, "/ui/page/knowledge/entities/sarah-chen.md")
	if v := view(t, page); strings.Contains(v, "^f7e1b22") || strings.Contains(v, "^f3c9a01") {
		t.Errorf("the page view shows a block id:\n%s", v)
	}
}

// view is the rendered page alone (not the source below it).
func view(t *testing.T, body string) string {
	t.Helper()
	_, v, ok := strings.Cut(body, `<div class="view" id="view">`)
	v, _, ok2 := strings.Cut(v, `<details class="source">`)
	if !ok || !ok2 {
		t.Fatalf("no view in:\n%s", body)
	}
	return v
}

// TestPageFrontmatter: a page's YAML frontmatter shows as a properties
// table above the body (not as a rule and a paragraph), Dataview fields
// as a key label and a value, and every block keeps its source line.
func TestPageFrontmatter(t *testing.T) {
	h := openHome(t, map[string]string{
		"knowledge/entities/sarah-chen.md": sarahChen,
		"knowledge/entities/acme-corp.md":  "# Acme Corp\n",
	}, noon)
	d := dashboard.New(h)
	code, body := fetchUI(t, d, "/ui/page/knowledge/entities/sarah-chen.md")
	checkPage(t, "sarah-chen", code, body)
	v := view(t, body)
	for _, want := range []string{
		`<table class="props"`,
		`<th scope="row">title</th><td>Sarah Chen</td>`,
		`<th scope="row">aliases</th><td><span class="prop">Sarah</span></td>`,
		`<th scope="row">tags</th><td><span class="prop tag">#entity</span></td>`,
		`<th scope="row">updated</th><td>2026-11-23</td>`,
		`<span class="field"><span class="field-key">seen</span> <span class="field-value">2026-11-20</span></span>`,
		`<span class="field"><span class="field-key">confidence</span> <span class="field-value">0.9</span></span>`,
		`<span class="field-key">works at</span> <a class="wikilink" href="/ui/page/knowledge/entities/acme-corp.md">acme-corp</a>`,
		`<span class="field-key">status</span> active<br>`,
		`<span class="field-key">team lead</span> yes`,
		`<hr>`, // the rule in the body stays a rule
	} {
		if !strings.Contains(v, want) {
			t.Errorf("the page view lacks %q:\n%s", want, v)
		}
	}
	for _, bad := range []string{"title: Sarah", "tags:", "::", `data-l="0"`} {
		if strings.Contains(v, bad) {
			t.Errorf("the page view shows %q:\n%s", bad, v)
		}
	}
	if n := strings.Count(v, "<hr>"); n != 1 {
		t.Errorf("%d rules in the view, want 1 (the body's)", n)
	}
	// Each block points at its own source lines.
	lines := strings.Split(sarahChen, "\n")
	lineOf := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return i + 1
			}
		}
		t.Fatalf("no line %q", prefix)
		return 0
	}
	for _, c := range []struct {
		start int
		holds string
	}{
		{1, `class="props"`},
		{lineOf("# Sarah Chen"), "Sarah Chen</h1>"},
	} {
		if c.holds == "" {
			continue
		}
		re := regexp.MustCompile(`data-l="` + fmt.Sprint(c.start) + `"[^>]*>.*?` + regexp.QuoteMeta(c.holds))
		if !re.MatchString(v) {
			t.Errorf("no block at line %d holding %q:\n%s", c.start, c.holds, v)
		}
	}
	hr := 0
	for i, l := range lines {
		if l == "---" && i > 8 {
			hr = i + 1
		}
	}
	if !regexp.MustCompile(`data-l="` + fmt.Sprint(hr) + `"[^>]*><a class="ln"[^>]*>` + fmt.Sprint(hr) + `</a><div class="md"><hr>`).MatchString(v) {
		t.Errorf("the body's rule is not at line %d:\n%s", hr, v)
	}
	// The editor's preview draws the same.
	rec := httptest.NewRecorder()
	b, _ := json.Marshal(map[string]string{"text": sarahChen})
	d.ServeHTTP(rec, httptest.NewRequest("POST", "/ui/api/preview", strings.NewReader(string(b))))
	var pv struct{ HTML string }
	json.Unmarshal(rec.Body.Bytes(), &pv)
	if !strings.Contains(pv.HTML, `<th scope="row">title</th><td>Sarah Chen</td>`) || strings.Contains(pv.HTML, "title: Sarah") || strings.Contains(pv.HTML, "[seen::") {
		t.Errorf("the preview draws:\n%s", pv.HTML)
	}
}

// TestFileAgesWallClock: a page's age (the notebook's Modified column,
// the page's "last modified") is its mtime against the wall clock, not
// the host's calendar clock: with the calendar years ahead of or behind
// the machine, a page just written is "just now" (a minute or two on a
// slow machine), never a date. "Today" still follows the calendar.
func TestFileAgesWallClock(t *testing.T) {
	fresh := regexp.MustCompile(`^(just now|\d+ min ago)$`)
	for _, tc := range []struct {
		name string
		now  time.Time
	}{
		{"calendar ahead", time.Now().AddDate(3, 0, 0)},
		{"calendar behind", time.Now().AddDate(-3, 0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			day := tc.now.UTC().Format(time.DateOnly)
			d := dashboard.New(openHome(t, map[string]string{
				"lists/todo.md":        "# To do\n",
				"daily/" + day + ".md": "# " + day + "\n",
			}, tc.now))
			for _, c := range []struct {
				target string
				age    *regexp.Regexp
			}{
				{"/ui/notebook?dir=lists", regexp.MustCompile(`<td class="num">[^<]*</td>\s*<td>([^<]*)</td>`)},
				{"/ui/page/lists/todo.md", regexp.MustCompile(`last modified ([^<]*?) <time`)},
			} {
				code, body := fetchUI(t, d, c.target)
				checkPage(t, c.target, code, body)
				m := c.age.FindStringSubmatch(body)
				if m == nil {
					t.Fatalf("GET %s shows no age:\n%s", c.target, body)
				}
				if !fresh.MatchString(m[1]) {
					t.Errorf("GET %s: a page just written was modified %q, want just now", c.target, m[1])
				}
			}
			code, body := fetchUI(t, d, "/")
			checkPage(t, "/", code, body)
			if want := "Latest: " + day + " (today)"; !strings.Contains(body, want) {
				t.Errorf("the home lacks %q:\n%s", want, body)
			}
		})
	}
}

// TestHomeHealthHistory: the home's health card lists the kept checks,
// newest first, with what did not pass (escaped), and says so when none
// is kept.
func TestHomeHealthHistory(t *testing.T) {
	h := openHome(t, map[string]string{"a.md": "# A\n"}, noon)
	d := dashboard.New(h)
	code, body := fetchUI(t, d, "/")
	checkPage(t, "/", code, body)
	if !strings.Contains(body, "No health check kept yet") {
		t.Fatalf("no history: the home lacks the note:\n%s", body)
	}
	bad := memhost.HealthReport{Timestamp: noon.Add(-time.Hour).UTC().Format(time.RFC3339), Overall: "DEGRADED",
		Checks: []memhost.HealthCheck{{Name: "pages", Status: "warn", Message: "1 page <b>stale</b>"}, {Name: "database", Status: "pass", Message: "readable"}}}
	if err := history.Save(h.Home(), bad, noon.Add(-time.Hour), 24*time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Health(context.Background(), memhost.HealthRequest{}); err != nil {
		t.Fatal(err)
	}
	code, body = fetchUI(t, d, "/")
	checkPage(t, "/", code, body)
	table, _, _ := strings.Cut(body[strings.Index(body, `id="health-history"`):], "</table>")
	table = tags.ReplaceAllString(table, " ")
	first, second := strings.Index(table, "just now"), strings.Index(table, "today 11:00")
	if first < 0 || second < first || !strings.Contains(body, "warn pages: 1 page &lt;b&gt;stale&lt;/b&gt;") || strings.Contains(table, "database: readable") {
		t.Fatalf("the health history:\n%s", table)
	}
}
