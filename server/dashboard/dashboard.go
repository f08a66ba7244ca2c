// Package dashboard is memhost's web dashboard (README.md, "Dashboard"):
// the notebook card, the notebook browser, page view and edit, grouped
// memory search, conversations and settings, served by `memhost serve`
// beside the API and under the same auth (server/auth.go).
//
// Pages are Go html/template, rendered on the server; a small script of our
// own (static/app.js, no library, no build step) adds search as you type,
// the editor's live preview, saves, and live updates from the API's event
// stream (GET /api/v1/events). Everything is embedded in the binary.
// Writes go through the host's operations, as the CLI's do: atomic and
// path-checked (a save is conditional on the page's hash: Host.SavePage).
//
// No page content ever runs as script: markdown is rendered by goldmark in
// safe mode (package pagehtml) and every response carries a Content Security
// Policy that allows scripts from the dashboard's own files only.
package dashboard

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/browse"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/server/dashboard/pagehtml"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// csp allows the dashboard's own script and style only: no inline script,
// no event-handler attributes, no javascript: URLs, nothing from
// elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// maxBody bounds a dashboard request body (a page's text).
const maxBody = 16 << 20

// Host is what the dashboard uses of the home it shows: its operations
// (every read and write of the notebook, the sessions, the plugins), and
// five reads of the core that are not operations. *host.Host is one.
type Host interface {
	api.API
	ConfigError() error
	FederationSummary(context.Context) *memhost.FederationStatus
	Home() string
	NotebookDir() string
	Now() time.Time
}

// Dashboard serves the dashboard of one Host.
type Dashboard struct {
	h    Host
	tmpl *template.Template
	md   goldmark.Markdown
	mux  *http.ServeMux
	// now is the host's calendar clock in the daily logs' zone: "today"
	// and the age of the last sync (which the indexer dates with it)
	// agree with the notebook and follow a test's clock. A file's age is
	// measured with the wall clock instead (the templates' "modified"):
	// the file system dates files.
	now func() time.Time

	useMu sync.Mutex // one provider switch at a time
}

// New returns the dashboard of h.
func New(h Host) *Dashboard {
	d := &Dashboard{h: h, now: h.Now}
	d.md = pagehtml.NewMarkdown(d.resolve)
	fm := template.FuncMap{
		"ago": func(s string) string { return ago(s, d.now()) },
		// An mtime is the wall clock's, which the calendar clock (moved
		// by MEMHOST_CLOCK_OFFSET) is not: a page just saved is "just
		// now" whatever day the notebook thinks it is.
		"modified": func(s string) string { return ago(s, time.Now().In(d.now().Location())) },
	}
	maps.Copy(fm, funcs)
	d.tmpl = template.Must(template.New("").Funcs(fm).ParseFS(templateFS, "templates/*.html"))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.home)
	mux.HandleFunc("GET /ui/notebook", d.notebook)
	mux.HandleFunc("GET /ui/page/{path...}", d.page)
	mux.HandleFunc("GET /ui/search", d.search)
	mux.HandleFunc("GET /ui/sessions", d.sessions)
	mux.HandleFunc("GET /ui/session/{id}", d.session)
	mux.HandleFunc("GET /ui/settings", d.settings)
	mux.HandleFunc("GET /ui/skills", d.skills)
	mux.HandleFunc("POST /ui/api/skill-review", d.skillReview)
	mux.HandleFunc("GET /ui/api/search", d.searchFragment)
	mux.HandleFunc("GET /ui/api/page/{path...}", d.pageJSON)
	mux.HandleFunc("GET /ui/api/status", d.statusJSON)
	mux.HandleFunc("POST /ui/api/save", d.save)
	mux.HandleFunc("POST /ui/api/preview", d.preview)
	mux.HandleFunc("POST /ui/api/delete", d.delete)
	mux.HandleFunc("POST /ui/api/use", d.use)
	mux.HandleFunc("POST /ui/api/plugins", d.plugins)
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /ui/static/", http.StripPrefix("/ui/static/", http.FileServerFS(static)))
	mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
		d.fail(w, r, fault.Errorf(fault.NotFound, "", "no dashboard page at %s", r.URL.Path))
	})
	d.mux = mux
	return d
}

// secure sets the headers every dashboard answer carries.
func secure(hd http.Header) {
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("X-Frame-Options", "DENY")
}

// bootTmpl is the boot page (templates/boot.html).
var bootTmpl = template.Must(template.New("").ParseFS(templateFS, "templates/boot.html"))

// Boot answers a navigation to the dashboard that carries no key when the
// server asks for a token (auth.BootPage; docs/api.md, "The dashboard"):
// a page whose script (static/boot.js) takes the key from the origin's
// storage, or from the page when key is not "" (the address held the
// token), asks for the same address with it and draws the answer in
// place. The dashboard's pages drawn so live under this page's Content
// Security Policy, the same as theirs. message says how to open the
// dashboard when the browser holds no key.
func Boot(w http.ResponseWriter, status int, key, message string) {
	var buf bytes.Buffer
	if err := bootTmpl.ExecuteTemplate(&buf, "boot.html", struct{ Key, Message string }{key, message}); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	secure(hd)
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	buf.WriteTo(w)
}

// ServeHTTP serves the dashboard's routes: GET / and everything under /ui/.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	secure(hd)
	static := strings.HasPrefix(r.URL.Path, "/ui/static/")
	if !static {
		hd.Set("Cache-Control", "no-store")
		// While config.yaml cannot be used, every page and call says so
		// (a page, or JSON under /ui/api/), as the API answers every
		// operation then: nothing is shown or saved with settings the file
		// no longer holds. The style sheet and script still load, for the
		// error page. The server rereads a changed file at each request.
		if err := d.h.ConfigError(); err != nil {
			d.fail(w, r, err)
			return
		}
	}
	d.mux.ServeHTTP(w, r)
}

var funcs = template.FuncMap{
	"pageURL": pagehtml.PageURL,
	"size":    humanSize,
	"lines": func(l memhost.Lines) string {
		if l.End > l.Start {
			return fmt.Sprintf("%d-%d", l.Start, l.End)
		}
		return fmt.Sprint(l.Start)
	},
	"score":   func(f float64) string { return fmt.Sprintf("%.2f", f) },
	"percent": func(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) },
	"folder": func(p string) string {
		if p == "" {
			return "/"
		}
		return p + "/"
	},
	"join":   strings.Join,
	"plural": plural,
	"base":   path.Base,
	"add":    func(a, b int) int { return a + b },
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
}

// layout is what every full page passes its template.
type layout struct {
	Title string
	Nav   string // the current tab
	Query string
	Body  any
}

// render draws a template whole before a byte goes out, so that a
// template that fails half-way answers 500 with what failed, never 200 with
// half a page.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	var buf bytes.Buffer
	if err := d.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		d.fail(w, r, fmt.Errorf("the page %s could not be drawn: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	buf.WriteTo(w)
}

// fragment draws a template that the script puts into a page (search as
// you type fills #results with it), whole before a byte goes out as
// render does. A failure answers a fragment too: one error element in
// place of the results, never a page or JSON that the script would put
// there.
func (d *Dashboard) fragment(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := d.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		d.failFragment(w, fmt.Errorf("%s could not be drawn: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	buf.WriteTo(w)
}

// failFragment answers an error as a fragment: one error element.
func (d *Dashboard) failFragment(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(statusOf(err))
	fmt.Fprintf(w, "<p class=\"error\" id=\"fragment-error\" role=\"alert\">%s</p>\n", template.HTMLEscapeString(err.Error()))
}

// fail answers an error: JSON for /ui/api/, a page otherwise.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if strings.HasPrefix(r.URL.Path, "/ui/api/") {
		writeJSON(w, status, map[string]any{"error": wireOf(err)})
		return
	}
	var buf bytes.Buffer
	if terr := d.tmpl.ExecuteTemplate(&buf, "error.html", layout{Title: "Error", Body: err.Error()}); terr != nil {
		http.Error(w, err.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	buf.WriteTo(w)
}

type wireErr struct {
	Kind    fault.Kind `json:"kind"`
	Field   string     `json:"field,omitempty"`
	Message string     `json:"message"`
}

func wireOf(err error) wireErr {
	return wireErr{Kind: fault.KindOf(err), Field: fault.FieldOf(err), Message: err.Error()}
}

func statusOf(err error) int {
	switch fault.KindOf(err) {
	case fault.BadInput:
		return http.StatusBadRequest
	case fault.NotFound:
		return http.StatusNotFound
	case fault.Outside:
		return http.StatusForbidden
	case fault.Conflict:
		return http.StatusConflict
	case fault.Unavailable:
		return http.StatusServiceUnavailable
	case fault.Canceled:
		return 499
	case fault.Timeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.Encode(v)
}

// decode reads a JSON body into v, refusing unknown fields.
func decode(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return fault.Errorf(fault.Canceled, "", "reading the request: %v", err)
	}
	if len(body) > maxBody {
		return fault.BadInputf("", "request body is larger than %d bytes", maxBody)
	}
	if !utf8.Valid(body) {
		return fault.BadInputf("", "request body is not valid UTF-8")
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fault.BadInputf("", "request body: %v", err)
	}
	return nil
}

// resolve finds the page a wikilink names: a path (with or without .md),
// or a page name looked for at the top and in each standard folder, as
// written or as a file name ("Sarah Chen" → sarah-chen.md).
func (d *Dashboard) resolve(target string) (string, bool) {
	t := strings.Trim(strings.TrimSpace(target), "/")
	if t == "" {
		return "", false
	}
	var cands []string
	add := func(p string) {
		if !strings.HasSuffix(p, ".md") {
			p += ".md"
		}
		cands = append(cands, p)
	}
	add(t)
	if s := pagehtml.Slug(t); s != t {
		add(s)
	}
	if !strings.Contains(t, "/") {
		// Entity pages (host/facts) link to each other by name.
		for _, f := range append(slices.Clone(browse.StandardFolders), facts.Dir) {
			add(f + "/" + t)
			add(f + "/" + pagehtml.Slug(t))
		}
	}
	root := d.h.NotebookDir()
	for _, c := range cands {
		if strings.Contains(c, "..") {
			continue
		}
		if fi, err := os.Stat(root + "/" + c); err == nil && fi.Mode().IsRegular() {
			return c, true
		}
	}
	return "", false
}

// Home.

type folderCard struct {
	Path   string
	Count  int
	Names  []string
	More   int
	Latest string // daily: the latest day
}

type homeBody struct {
	Folders []folderCard
	Status  memhost.StatusResponse
	Fed     *fedCard               // nil when the home is not federated
	History []memhost.HealthReport // the latest kept health checks, newest first
	Err     string
}

// historyRows is how many kept health checks the home page lists.
const historyRows = 6

func (d *Dashboard) home(w http.ResponseWriter, r *http.Request) {
	b, err := d.homeData(r.Context())
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, "home.html", layout{Title: "memhost", Nav: "home", Body: b})
}

func (d *Dashboard) homeData(ctx context.Context) (homeBody, error) {
	var b homeBody
	// The index summary (counts over every chunk) and the notebook's
	// listing (a readdir of every folder) run side by side.
	summary := make(chan error, 1)
	go func() {
		var err error
		b.Status, err = d.h.Status(ctx, memhost.StatusRequest{Quick: true})
		summary <- err
	}()
	// The git sync card (a git process) runs beside them too.
	fed := make(chan *fedCard, 1)
	go func() { fed <- d.fedData(ctx) }()
	pages, err := d.h.Pages(ctx, memhost.PagesRequest{})
	if hist, herr := d.h.HealthHistory(ctx, memhost.HealthHistoryRequest{Limit: historyRows}); herr == nil {
		b.History = hist.Reports
	}
	b.Fed = <-fed
	if serr := <-summary; serr != nil {
		b.Err = serr.Error()
	}
	if err != nil {
		return b, err
	}
	// One row per top-level folder, its subfolders' pages
	// counted in it; pages at the top make a row of their own.
	byTop := map[string]*folderCard{}
	var order []string
	for _, f := range pages.Folders {
		top, _, _ := strings.Cut(f.Path, "/")
		c := byTop[top]
		if c == nil {
			c = &folderCard{Path: top}
			byTop[top] = c
			order = append(order, top)
		}
		c.Count += len(f.Pages)
		for _, p := range f.Pages {
			if top == "daily" {
				// Only daily/YYYY-MM-DD.md is a day: rollups
				// (daily/rollups/2026-W47.md) and archived days are not
				// the latest log.
				if day, ok := dailyDate(p.Path); ok && day > c.Latest {
					c.Latest = day
				}
				continue
			}
			if len(c.Names) < 4 {
				c.Names = append(c.Names, p.Title)
			} else {
				c.More++
			}
		}
	}
	today := d.now().Format(time.DateOnly)
	for _, top := range order {
		c := byTop[top]
		if c.Count == 0 && top == "" {
			continue
		}
		if c.Latest == today {
			c.Latest += " (today)"
		}
		b.Folders = append(b.Folders, *c)
	}
	return b, nil
}

// dailyDate is the day of a daily log, daily/YYYY-MM-DD.md.
func dailyDate(p string) (string, bool) {
	dir, file := path.Split(p)
	day := strings.TrimSuffix(file, ".md")
	if dir != "daily/" || day == file {
		return "", false
	}
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return "", false
	}
	return day, true
}

// Notebook browser.

type notebookBody struct {
	Folders []memhost.FolderEntry
	Current memhost.FolderEntry
	New     string
}

func (d *Dashboard) notebook(w http.ResponseWriter, r *http.Request) {
	b := notebookBody{New: r.URL.Query().Get("new")}
	dir := r.URL.Query().Get("dir")
	if dir == "" && b.New != "" {
		dir = path.Dir(b.New)
		if dir == "." {
			dir = ""
		}
	}
	if !r.URL.Query().Has("dir") && b.New == "" {
		dir = "lists"
	}
	pages, err := d.h.Pages(r.Context(), memhost.PagesRequest{Folder: dir})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	b.Folders = pages.Folders
	b.Current = memhost.FolderEntry{Path: dir, Pages: []memhost.PageEntry{}}
	for _, f := range pages.Folders {
		if f.Path == dir {
			b.Current = f
		}
	}
	if b.New == "" {
		b.New = strings.TrimPrefix(b.Current.Path+"/", "/")
	}
	d.render(w, r, "notebook.html", layout{Title: "Notebook", Nav: "notebook", Body: b})
}

// Page view.

type pageBody struct {
	Page   memhost.PageResponse
	Blocks []pagehtml.Block
	Plain  template.HTML // in place of Blocks: the page as text, with why
	Lines  []string
	Folder string
	Edit   bool
}

func (d *Dashboard) page(w http.ResponseWriter, r *http.Request) {
	p, err := d.h.Page(r.Context(), memhost.PageRequest{Path: r.PathValue("path"), MaxBytes: pagehtml.MaxRenderBytes})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	blocks, plain, err := d.view(r.Context(), p)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	folder := path.Dir(p.Path)
	if folder == "." {
		folder = ""
	}
	b := pageBody{Page: p, Blocks: blocks, Plain: plain, Folder: folder, Edit: r.URL.Query().Has("edit") && !p.Truncated}
	if plain == "" { // the text is in the view already
		b.Lines = strings.Split(strings.TrimSuffix(p.Text, "\n"), "\n")
	}
	d.render(w, r, "page.html", layout{Title: p.Path, Nav: "notebook", Body: b})
}

// view renders a page: its blocks, or the page as text when it is too
// large (p.Truncated) or too slow to render (pagehtml/render.go). An error is the
// request's end or a renderer's failure.
func (d *Dashboard) view(ctx context.Context, p memhost.PageResponse) ([]pagehtml.Block, template.HTML, error) {
	if p.Truncated {
		return nil, pagehtml.PlainHTML(pagehtml.ErrTooLarge, p.Text), nil
	}
	rctx, cancel := pagehtml.WithBudget(ctx)
	defer cancel()
	blocks, err := pagehtml.RenderBlocks(rctx, d.md, d.resolve, []byte(p.Text))
	switch {
	case pagehtml.TooSlow(ctx, err):
		return nil, pagehtml.PlainHTML(pagehtml.ErrTooSlow, p.Text), nil
	case err != nil && ctx.Err() != nil:
		return nil, "", fault.Errorf(fault.Canceled, "", "the request ended while %s rendered: %w", p.Path, err)
	}
	return blocks, "", err
}

// htmlOf renders text whole (the editor's preview, a page's JSON), or as
// text when it is too large (truncated: the start of a larger page) or
// too slow to render.
func (d *Dashboard) htmlOf(ctx context.Context, text string, truncated bool) (string, error) {
	if truncated || len(text) > pagehtml.MaxRenderBytes {
		return string(pagehtml.PlainHTML(pagehtml.ErrTooLarge, strings.ToValidUTF8(text[:min(len(text), pagehtml.MaxRenderBytes)], ""))), nil
	}
	rctx, cancel := pagehtml.WithBudget(ctx)
	defer cancel()
	html, err := pagehtml.RenderHTML(rctx, d.md, d.resolve, []byte(text))
	switch {
	case pagehtml.TooSlow(ctx, err):
		return string(pagehtml.PlainHTML(pagehtml.ErrTooSlow, text)), nil
	case err != nil && ctx.Err() != nil:
		return "", fault.Errorf(fault.Canceled, "", "the request ended while the text rendered: %w", err)
	}
	return html, err
}

// pageJSON is a page's text, hash and rendering, for the editor (a
// conflict shows both versions) and live updates.
func (d *Dashboard) pageJSON(w http.ResponseWriter, r *http.Request) {
	p, err := d.h.Page(r.Context(), memhost.PageRequest{Path: r.PathValue("path"), MaxBytes: pagehtml.MaxRenderBytes})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	html, err := d.htmlOf(r.Context(), p.Text, p.Truncated)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"page": p, "html": html})
}

type saveRequest struct {
	Path     string `json:"path"`
	Text     string `json:"text"`
	BaseHash string `json:"baseHash"`
}

// save is a conditional save: a conflict answers 409 with the page as it
// is now, so that the editor shows both versions.
func (d *Dashboard) save(w http.ResponseWriter, r *http.Request) {
	var req saveRequest
	if err := decode(r, &req); err != nil {
		d.fail(w, r, err)
		return
	}
	resp, err := d.h.SavePage(r.Context(), memhost.SavePageRequest{Path: req.Path, Text: req.Text, BaseHash: req.BaseHash})
	if fault.KindOf(err) == fault.Conflict && fault.FieldOf(err) == "baseHash" {
		out := map[string]any{"error": wireOf(err)}
		if cur, err := d.h.Page(r.Context(), memhost.PageRequest{Path: req.Path, MaxBytes: pagehtml.MaxRenderBytes}); err == nil {
			html, _ := d.htmlOf(r.Context(), cur.Text, cur.Truncated)
			out["current"] = map[string]any{"page": cur, "html": html}
		}
		writeJSON(w, http.StatusConflict, out)
		return
	}
	if err != nil {
		d.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"result": resp, "url": pagehtml.PageURL(resp.Path)})
}

func (d *Dashboard) preview(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Text string `json:"text"`
	}
	if err := decode(r, &req); err != nil {
		d.fail(w, r, err)
		return
	}
	html, err := d.htmlOf(r.Context(), req.Text, false)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"html": html})
}

func (d *Dashboard) delete(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Path string `json:"path"`
	}
	if err := decode(r, &req); err != nil {
		d.fail(w, r, err)
		return
	}
	resp, err := d.h.Remove(r.Context(), memhost.RemoveRequest{Path: req.Path})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	dir := path.Dir(resp.Path)
	if dir == "." {
		dir = ""
	}
	writeJSON(w, http.StatusOK, map[string]any{"result": resp, "url": "/ui/notebook?dir=" + dir})
}

// Skills.

func (d *Dashboard) skills(w http.ResponseWriter, r *http.Request) {
	resp, err := d.h.Skills(r.Context(), memhost.SkillsRequest{})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, "skills.html", layout{Title: "Skills", Nav: "skills", Body: resp})
}

// skillReview accepts or rejects a skill (SkillReview).
func (d *Dashboard) skillReview(w http.ResponseWriter, r *http.Request) {
	var req memhost.SkillReviewRequest
	if err := decode(r, &req); err != nil {
		d.fail(w, r, err)
		return
	}
	resp, err := d.h.SkillReview(r.Context(), req)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// Search.

type searchBody struct {
	Query    string
	Sessions bool
	Tiers    bool // the memory context: every tier within the budget
	Resp     *memhost.RecallResponse
	Context  *memhost.ContextResponse
	Groups   []resultGroup
	Err      string
}

type resultGroup struct {
	Name    string
	Results []markedResult
}

type markedResult struct {
	memhost.Result
	Marked template.HTML
	URL    string
}

func (d *Dashboard) searchData(ctx context.Context, q string, withSessions, tiers bool) searchBody {
	b := searchBody{Query: q, Sessions: withSessions, Tiers: tiers}
	if strings.TrimSpace(q) == "" {
		return b
	}
	if tiers {
		return d.contextData(ctx, b)
	}
	req := memhost.RecallRequest{Query: q}
	if withSessions {
		req.Sources = []string{"notebook", "daily", "sessions"}
	}
	resp, err := d.h.Recall(ctx, req)
	if err != nil {
		b.Err = err.Error()
		return b
	}
	b.Resp = &resp
	terms := queryTerms(q)
	group := func(name string, rs []memhost.Result) {
		g := resultGroup{Name: name}
		for _, r := range rs {
			m := markedResult{Result: r, Marked: snippetHTML(r.Snippet, terms)}
			if r.Session != "" {
				m.URL = "/ui/session/" + r.Session
				if len(r.Turns) > 0 {
					m.URL += "#turn-" + r.Turns[0]
				}
			} else {
				m.URL = pagehtml.PageURL(r.Path) + fmt.Sprintf("#L%d-%d", r.Lines.Start, max(r.Lines.End, r.Lines.Start))
			}
			g.Results = append(g.Results, m)
		}
		b.Groups = append(b.Groups, g)
	}
	if len(resp.Results.Facts) > 0 { // as recall answers: only when some match
		facts := make([]memhost.Result, len(resp.Results.Facts))
		for i, f := range resp.Results.Facts {
			facts[i] = memhost.Result{Path: f.Path, Heading: f.Entity, Snippet: f.Attribute + ": " + f.Value,
				Lines: memhost.Lines{Start: f.Line, End: f.Line}, Score: f.Score}
		}
		group("FACTS", facts)
	}
	group("NOTEBOOK", resp.Results.Notebook)
	group("DAILY", resp.Results.Daily)
	if withSessions {
		group("SESSIONS", resp.Results.Sessions)
	}
	return b
}

// contextData is the memory context for b's query (Host.Context), a
// group a tier, in the order they fill the budget.
func (d *Dashboard) contextData(ctx context.Context, b searchBody) searchBody {
	resp, err := d.h.Context(ctx, memhost.ContextRequest{Query: b.Query})
	if err != nil {
		b.Err = err.Error()
		return b
	}
	b.Context = &resp
	terms := queryTerms(b.Query)
	for _, tier := range memhost.ContextTiers {
		g := resultGroup{Name: strings.ToUpper(tier)}
		for _, it := range resp.Items {
			if it.Tier != tier {
				continue
			}
			m := markedResult{Result: memhost.Result{Path: it.Path, Score: it.Score, Lines: it.Lines, Session: it.Session, Turns: it.Turns}, Marked: snippetHTML(it.Text, terms)}
			m.URL = pagehtml.PageURL(it.Path) + fmt.Sprintf("#L%d-%d", it.Lines.Start, max(it.Lines.End, it.Lines.Start))
			if it.Session != "" {
				m.URL = "/ui/session/" + it.Session
				if len(it.Turns) > 0 {
					m.URL += "#turn-" + it.Turns[0]
				}
			}
			g.Results = append(g.Results, m)
		}
		b.Groups = append(b.Groups, g)
	}
	return b
}

func (d *Dashboard) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	b := d.searchData(r.Context(), q, r.URL.Query().Get("sessions") != "", r.URL.Query().Get("tiers") != "")
	d.render(w, r, "search.html", layout{Title: "Search", Nav: "search", Query: q, Body: b})
}

// searchFragment is the results alone, for search as you type.
func (d *Dashboard) searchFragment(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	b := d.searchData(r.Context(), r.URL.Query().Get("q"), r.URL.Query().Get("sessions") != "", r.URL.Query().Get("tiers") != "")
	w.Header().Set("Server-Timing", fmt.Sprintf("search;dur=%.1f", float64(time.Since(start).Microseconds())/1000))
	d.fragment(w, "results", b)
}

// queryTerms are the query's words, lowercased.
func queryTerms(q string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// mark escapes a snippet and wraps the words that match a query term (the
// same word, or one it starts, as the index's stemming finds "meeting" for
// "meet") in <mark>.
func mark(snippet string, terms []string) template.HTML {
	var b strings.Builder
	word := func(w string) {
		lw := strings.ToLower(w)
		hit := false
		for _, t := range terms {
			if lw == t || len(t) >= 3 && strings.HasPrefix(lw, t) || len(lw) >= 4 && strings.HasPrefix(t, lw) {
				hit = true
				break
			}
		}
		if hit {
			b.WriteString("<mark>" + template.HTMLEscapeString(w) + "</mark>")
		} else {
			b.WriteString(template.HTMLEscapeString(w))
		}
	}
	start := -1
	for i, r := range snippet {
		isWord := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case isWord && start < 0:
			start = i
		case !isWord && start >= 0:
			word(snippet[start:i])
			start = -1
		}
		if !isWord {
			b.WriteString(template.HTMLEscapeString(string(r)))
		}
	}
	if start >= 0 {
		word(snippet[start:])
	}
	return template.HTML(b.String())
}

// Conversations.

type sessionsBody struct {
	Sessions []memhost.SessionSummary
	Query    string
	Results  *memhost.ConversationSearchResponse
	Hits     []markedTurn // Results' hits, their snippets marked
	Err      string
}

type markedTurn struct {
	memhost.TurnResult
	Marked template.HTML
}

func (d *Dashboard) sessions(w http.ResponseWriter, r *http.Request) {
	list, err := d.h.Sessions(r.Context(), memhost.SessionsRequest{})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	b := sessionsBody{Sessions: list.Sessions, Query: r.URL.Query().Get("q")}
	if strings.TrimSpace(b.Query) != "" {
		resp, err := d.h.ConversationSearch(r.Context(), memhost.ConversationSearchRequest{Query: b.Query, MaxResults: 20})
		if err != nil {
			b.Err = err.Error()
		} else {
			b.Results = &resp
			terms := queryTerms(b.Query)
			for _, t := range resp.Results {
				b.Hits = append(b.Hits, markedTurn{TurnResult: t, Marked: mark(t.Snippet, terms)})
			}
		}
	}
	d.render(w, r, "sessions.html", layout{Title: "Conversations", Nav: "sessions", Query: b.Query, Body: b})
}

type turnView struct {
	memhost.Turn
	Compaction bool
	Flushes    []memhost.FlushReceipt // flushes asked right before this turn
}

type sessionBody struct {
	T     memhost.TranscriptResponse
	Turns []turnView
	Tail  []memhost.FlushReceipt // flushes after the last turn
}

func (d *Dashboard) session(w http.ResponseWriter, r *http.Request) {
	tr, err := d.h.Transcript(r.Context(), memhost.TranscriptRequest{Session: r.PathValue("id")})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	b := sessionBody{T: tr}
	fl := tr.Flushes
	for _, t := range tr.Turns {
		tv := turnView{Turn: t, Compaction: t.Type == "compaction"}
		if tt, ok := parseTime(t.Timestamp); ok {
			for len(fl) > 0 {
				ft, ok := parseTime(fl[0].Time)
				if !ok || !ft.After(tt) {
					tv.Flushes = append(tv.Flushes, fl[0])
					fl = fl[1:]
					continue
				}
				break
			}
		}
		b.Turns = append(b.Turns, tv)
	}
	b.Tail = fl
	d.render(w, r, "session.html", layout{Title: "Session " + tr.Session, Nav: "sessions", Body: b})
}

func parseTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// Settings.

// The plugin list is not drawn with the page: listing the plugins starts
// each one (its version, model and status are the plugin's to say), and a
// provider started without its model downloads it. A GET, which any page
// of any site could once make a browser send with an image, starts
// nothing: the page's script asks for the list (POST /ui/api/plugins).
type settingsBody struct {
	Status  memhost.StatusResponse
	Storage memhost.StorageResponse
	Models  memhost.ModelsResponse
	Errs    []string
}

func (d *Dashboard) settings(w http.ResponseWriter, r *http.Request) {
	var b settingsBody
	var err error
	ctx := r.Context()
	if b.Status, err = d.h.Status(ctx, memhost.StatusRequest{}); err != nil {
		b.Errs = append(b.Errs, "status: "+err.Error())
	}
	if b.Storage, err = d.h.Storage(ctx, memhost.StorageRequest{}); err != nil {
		b.Errs = append(b.Errs, "storage: "+err.Error())
	}
	if b.Models, err = d.h.Models(ctx, memhost.ModelsRequest{}); err != nil {
		b.Errs = append(b.Errs, "models: "+err.Error())
	}
	d.render(w, r, "settings.html", layout{Title: "Settings", Nav: "settings", Body: b})
}

// plugins is the settings' plugin list, a fragment the script puts in
// #plugins-box: every installed embeddings plugin, started to ask its
// state (Host.Plugins), with its switch.
func (d *Dashboard) plugins(w http.ResponseWriter, r *http.Request) {
	resp, err := d.h.Plugins(r.Context(), memhost.PluginsRequest{})
	if err != nil && len(resp.Plugins) == 0 {
		d.failFragment(w, err)
		return
	}
	if err != nil {
		resp.Warnings = append(resp.Warnings, err.Error())
	}
	d.fragment(w, "plugins", resp)
}

// statusJSON is the index's and the provider's state, polled by the
// settings page while a model downloads or chunks are re-embedded.
func (d *Dashboard) statusJSON(w http.ResponseWriter, r *http.Request) {
	st, err := d.h.PluginStatus(r.Context(), memhost.PluginStatusRequest{})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

type useRequest struct {
	Name string            `json:"name"`
	Set  map[string]string `json:"set,omitempty"`
}

// use switches the embeddings provider (Host.UsePlugin). The API serves
// that on the unix socket only, since options may name files and hosts for
// the server to read or reach; the dashboard, reachable over TCP, takes
// option values that name neither (a model name, a number) and says to
// use the CLI for the others.
func (d *Dashboard) use(w http.ResponseWriter, r *http.Request) {
	var req useRequest
	if err := decode(r, &req); err != nil {
		d.fail(w, r, err)
		return
	}
	for k, v := range req.Set {
		if namesFileOrHost(v) {
			d.fail(w, r, fault.Errorf(fault.Outside, "set", "option %s=%q names a file or a host: set it with `memhost plugins use %s --set %s=...` (the unix socket)", k, v, req.Name, k))
			return
		}
	}
	d.useMu.Lock()
	defer d.useMu.Unlock()
	resp, err := d.h.UsePlugin(r.Context(), memhost.UsePluginRequest{Name: req.Name, Set: req.Set})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func namesFileOrHost(v string) bool {
	return strings.ContainsAny(v, `/\:`) || strings.HasPrefix(v, "~") || strings.HasPrefix(v, ".")
}

// Formatting.

// plural says a count with its noun: "1 file", "2 files"; many is the
// plural when it is not one+"s" ("entry", "entries").
func plural(n any, one string, many ...string) (string, error) {
	var c int64
	switch v := n.(type) {
	case int:
		c = int64(v)
	case int64:
		c = v
	case int32:
		c = int64(v)
	default:
		return "", fmt.Errorf("plural of %T", n)
	}
	if c == 1 {
		return "1 " + one, nil
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", c, many[0]), nil
	}
	return fmt.Sprintf("%d %ss", c, one), nil
}

func humanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1024*1024*1024))
}

// ago shows an RFC 3339 time as a person reads it at now: "2 min ago",
// "yesterday 14:05", "Feb 20", in now's zone.
func ago(s string, now time.Time) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	t = t.In(now.Location())
	d := now.Sub(t)
	switch {
	case d < 0:
		return t.Format("2006-01-02 15:04")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case t.YearDay() == now.YearDay() && t.Year() == now.Year():
		return "today " + t.Format("15:04")
	case d < 48*time.Hour && t.YearDay() == now.AddDate(0, 0, -1).YearDay():
		return "yesterday " + t.Format("15:04")
	case t.Year() == now.Year():
		return t.Format("Jan 2")
	}
	return t.Format("2006-01-02")
}
