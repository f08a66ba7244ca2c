package dashboard_test

// The dashboard driven in a real browser: Debian's chromium, headless,
// through chromedp, against a real server (server.Run on a temporary home,
// TCP on 127.0.0.1) with the hello embeddings plugin built from
// examples/embeddings-hello. Without chromium the tests skip with one line
// (scripts/chromium.sh, run by `make test`, installs it when it can).
//
// go test -tags sqlite_fts5 ./server/dashboard/ -dashboard.screenshots=../../docs/screenshots
// refreshes the README's screenshots.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/internal/testbin"
	"github.com/memhost/memhost/server"
)

var screenshotDir = flag.String("dashboard.screenshots", "", "write a PNG of each screen, desktop and phone width, into this folder")

// chromiumPath finds the browser, or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed: the dashboard's browser tests skip (scripts/chromium.sh installs it as root)")
	return ""
}

var (
	helloOnce sync.Once
	helloBin  string
	helloErr  error
)

// helloPlugin builds examples/embeddings-hello once per test run.
func helloPlugin(t *testing.T) string {
	t.Helper()
	helloOnce.Do(buildHello)
	if helloErr != nil {
		t.Fatalf("building the hello plugin: %v", helloErr)
	}
	return helloBin
}

// buildHello builds the plugin through internal/testbin: helloBin is
// shared, to be copied, never changed.
func buildHello() {
	helloBin, helloErr = testbin.Build("../../examples/embeddings-hello", "")
}

// fixture is a home with a few pages, a transcript with a compaction entry
// and a flush receipt, and the hello plugin installed but not in use.
func fixture(t *testing.T, pages map[string]string) string {
	t.Helper()
	home := t.TempDir()
	writeHome(t, home, pages, []map[string]any{
		{"id": "t1", "type": "message", "role": "user", "content": "The staging database password rotates every month.", "timestamp": "2026-11-20T09:00:00Z"},
		{"id": "t2", "type": "message", "role": "assistant", "content": "Noted: staging password rotates monthly.", "timestamp": "2026-11-20T09:00:05Z"},
		{"id": "c1", "type": "compaction", "content": "Summary: the user told the agent about the staging password rotation.", "timestamp": "2026-11-20T10:00:00Z"},
		{"id": "t3", "type": "message", "role": "user", "content": "What was the plan for Friday?", "timestamp": "2026-11-20T10:05:00Z"},
	})
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	b, err := os.ReadFile(helloPlugin(t))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(home, "plugins", "memhost-embeddings-hello"), b, 0o755)
	return home
}

// writeHome writes pages into home's notebook, turns as the transcript
// sessions/demo.jsonl and one flush receipt of it.
func writeHome(t testing.TB, home string, pages map[string]string, turns []map[string]any) {
	t.Helper()
	for rel, text := range pages {
		p := filepath.Join(home, "notebook", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(home, "sessions"), 0o755)
	var lines []string
	for _, turn := range turns {
		b, _ := json.Marshal(turn)
		lines = append(lines, string(b))
	}
	os.WriteFile(filepath.Join(home, "sessions", "demo.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.WriteFile(filepath.Join(home, "sessions", ".flush-receipts.jsonl"), []byte(`{"session":"demo","time":"2026-11-20T09:59:00Z","tokens":91000}`+"\n"), 0o644)
}

// serve runs a real server on home until the test ends and returns its
// URL.
func serve(t *testing.T, home string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	listen := "127.0.0.1:0"
	ready := make(chan server.Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, server.RunOptions{
			Home: home, Listen: &listen,
			Open: func(ctx context.Context) (*host.Host, error) {
				cfg, err := config.Load(filepath.Join(home, "config.yaml"), nil)
				if err != nil {
					return nil, err
				}
				cfg.Memory.Embedding.Plugin = "" // keyword search until the test switches
				h, err := host.Open(ctx, host.Options{Home: home, Config: cfg})
				if err != nil {
					return nil, err
				}
				if _, err := h.Init(ctx, memhost.InitRequest{}); err != nil { // config.yaml, for the switch to edit
					h.Close()
					return nil, err
				}
				return h, nil
			},
			Ready:  func(in server.Info) { ready <- in },
			Getenv: func(string) string { return "" },
		})
	}()
	var in server.Info
	select {
	case in = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Run: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the server did not start")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the server did not stop")
		}
	})
	return in.URL
}

// browser starts a headless chromium for the test; it stops with the test
// or after timeout.
func browser(t *testing.T, timeout time.Duration) context.Context {
	t.Helper()
	path := chromiumPath(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 800), chromedp.Flag("hide-scrollbars", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	ctx, cancelC := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	if err := chromedp.Do(ctx, dark()); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

type step = chromedp.Action[chromedp.Void]

// dark asks for the dark colour scheme (the README's screenshots).
func dark() step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	})
}

// css is a CSS selector (a plain string would be a DOM search).
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

func run(t *testing.T, ctx context.Context, what string, steps ...step) {
	t.Helper()
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 2*time.Second {
			t.Logf("%s took %s", what, d.Round(time.Millisecond))
		}
	}()
	if err := chromedp.Do(ctx, steps...); err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("%s (at %s): %v", what, loc, err)
	}
}

// get runs one action that gives a value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		loc, _ := chromedp.Run(ctx, chromedp.Location())
		t.Fatalf("%s (at %s): %v", what, loc, err)
	}
	return v
}

// text reads sel's visible text in one script: a live update may replace
// the node between a query and a read by node id ("No node with given id").
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return e ? e.innerText : null })()`, sel)
	var got string
	run(t, ctx, "text of "+sel, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for {
			v, err := chromedp.Evaluate[string](js)(ctx, tg)
			if err == nil {
				got = v
				return nil
			}
			if !errors.Is(err, chromedp.ErrJSNull) { // null: not there (yet, or again)
				return err
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s never appeared", sel)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}))
	return got
}

func eval(t *testing.T, ctx context.Context, js string) step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](js)(ctx, tg)
		if errors.Is(err, chromedp.ErrJSUndefined) || errors.Is(err, chromedp.ErrJSNull) {
			return nil
		}
		return err
	})
}

// shot saves the screen at desktop and phone width when
// -dashboard.screenshots is given.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *screenshotDir == "" {
		return
	}
	for _, size := range []struct {
		suffix string
		w, h   int64
		mobile bool
	}{{"desktop", 1280, 800, false}, {"phone", 390, 844, true}} {
		vp := chromedp.EmulateViewport(size.w, size.h)
		if size.mobile {
			vp = chromedp.EmulateViewport(size.w, size.h, chromedp.EmulateMobile, chromedp.EmulatePortrait)
		}
		run(t, ctx, "viewport", vp, chromedp.Sleep(200*time.Millisecond))
		png := get(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
		if err := os.WriteFile(filepath.Join(*screenshotDir, name+"-"+size.suffix+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, ctx, "viewport", chromedp.EmulateViewport(1280, 800))
}

// waitText polls until the element's text contains want.
func waitText(sel, want string) step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		var got string
		for {
			v, err := chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q)||{}).textContent||""`, sel))(ctx, tg)
			if err == nil {
				got = v
				if strings.Contains(got, want) {
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s never showed %q (last: %q)", sel, want, got)
			case <-time.After(100 * time.Millisecond):
			}
		}
	})
}

var demoPages = map[string]string{
	"reference/contacts.md":    "# Contacts\n\n## Sarah Chen\n- Phone: 555-1234\n- Email: sarah@example.com\n- Prefers email over phone.\n\n## Bob Smith\n- Phone: 555-9876\n- Old college friend. Lives in Austin.\n",
	"reference/preferences.md": "# Preferences\n\n## Morning routine\n- Coffee before meetings\n",
	"lists/shopping.md":        "# Shopping\n\n## Groceries\n- [ ] Milk\n- [x] Eggs\n- [ ] Call [[contacts]] about the party\n",
	"lists/todos.md":           "# To Do\n\n- [ ] Call dentist\n- [ ] Renew passport\n",
	"knowledge/facts.md":       "# Facts\n\n## Tech stack\n- The frontend uses React 19.\n- Staging deploys every Friday.\n",
	"daily/2026-11-20.md":      "# 2026-11-20\n\n## 09:15 — Morning check-in\nCalled Sarah about the project timeline.\n",
	"projects/garden.md":       "# Garden\n\nPlant tomatoes in May.\n",
	"scratch.md":               "# Scratch\n\nA page at the top of the notebook.\n",
}

func TestBrowserEndToEnd(t *testing.T) {
	home := fixture(t, demoPages)
	url := serve(t, home)
	ctx := browser(t, 4*time.Minute)

	// Home: the notebook card and the index's health.
	run(t, ctx, "home",
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(css("#nb-h")),
		waitText("#mode", "keyword"),
		waitText("#live", "live"),
		waitText("#health-history", "No health check kept yet"),
	)
	card := text(t, ctx, "table.folders")
	for _, want := range []string{"lists/", "2 files", "Shopping, Todos", "reference/", "knowledge/", "daily/", "Latest: 2026-11-20", "projects/"} {
		if !strings.Contains(card, want) {
			t.Errorf("the notebook card lacks %q:\n%s", want, card)
		}
	}
	shot(t, ctx, "home")

	// Browse: folders, files with size and time.
	run(t, ctx, "browse",
		chromedp.Click(css(`a.button[href="/ui/notebook"]`)),
		chromedp.WaitVisible(css("#files")),
		chromedp.Click(css(`.tabs a[href="/ui/notebook?dir=reference"]`)),
		waitText("#files", "reference/preferences.md"),
	)
	files := text(t, ctx, "#files")
	if !strings.Contains(files, "reference/contacts.md") || !strings.Contains(files, " B") {
		t.Errorf("the reference folder lists:\n%s", files)
	}
	shot(t, ctx, "notebook")

	// A page: rendered, lines, wikilinks.
	run(t, ctx, "page",
		chromedp.Navigate(url+"/ui/page/lists/shopping.md#L5-7"),
		chromedp.WaitVisible(css("#view")),
		chromedp.WaitVisible(css(".blk.hit")),
	)
	wiki := get(t, ctx, "wikilink", chromedp.AttributeValue(css("a.wikilink"), "href")).Value
	if wiki != "/ui/page/reference/contacts.md" {
		t.Errorf("[[contacts]] links to %q", wiki)
	}
	checked := get(t, ctx, "checkboxes", chromedp.Evaluate[int](`document.querySelectorAll('#view input[type=checkbox]:checked').length`))
	if checked != 1 {
		t.Errorf("%d checked checkboxes, want 1", checked)
	}
	shot(t, ctx, "page")

	// Edit, preview, save; the edit is found by search.
	run(t, ctx, "edit",
		chromedp.Navigate(url+"/ui/page/reference/contacts.md"),
		chromedp.WaitVisible(css("#edit")),
		chromedp.Click(css("#edit")),
		chromedp.WaitVisible(css("#text")),
		eval(t, ctx, `document.querySelector('#text').value += "\n## Zed Quokka\n- Lives in Perth, keeps marmalade.\n"`),
		chromedp.SendKeys(css("#text"), " "),
		waitText("#preview", "Zed Quokka"),
	)
	shot(t, ctx, "edit")
	run(t, ctx, "save",
		chromedp.Click(css("#save")),
		chromedp.WaitNotPresent(css("#editor:not([hidden])")),
		waitText("#view", "keeps marmalade"),
	)
	disk, _ := os.ReadFile(filepath.Join(home, "notebook", "reference", "contacts.md"))
	if !strings.Contains(string(disk), "## Zed Quokka") {
		t.Fatalf("the save did not reach the disk:\n%s", disk)
	}
	run(t, ctx, "search as you type",
		chromedp.Navigate(url+"/ui/search"),
		chromedp.WaitVisible(css("#q")),
		chromedp.SendKeys(css("#q"), "marmalade"),
		waitText("#results", "reference/contacts.md"),
	)
	loc, marked := text(t, ctx, "#results a.loc"), text(t, ctx, "#results mark")
	if !strings.HasPrefix(loc, "reference/contacts.md:") || !strings.EqualFold(marked, "marmalade") {
		t.Errorf("search shows %q with %q marked", loc, marked)
	}
	groups := get(t, ctx, "groups", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#results .group h2')).map(h => h.textContent)`))
	if strings.Join(groups, ",") != "NOTEBOOK (1),DAILY (0)" {
		t.Errorf("groups %q", groups)
	}
	run(t, ctx, "a result opens its lines",
		chromedp.Click(css(`#results a.loc`)),
		chromedp.WaitVisible(css(".blk.hit")),
		waitText(".blk.hit", "Zed Quokka"),
	)
	run(t, ctx, "search screen", chromedp.Navigate(url+"/ui/search?q=sarah+phone"), chromedp.WaitVisible(css("#results .group")))
	shot(t, ctx, "search")
	// All tiers: the memory context an agent gets, a group a tier, and
	// ticking the box while typing asks for it.
	run(t, ctx, "all tiers",
		chromedp.Navigate(url+"/ui/search?q=sarah+phone"),
		chromedp.WaitVisible(css("#results .group")),
		chromedp.Click(css("#with-tiers")),
		waitText("#context-budget", "of 5000 tokens"),
		waitText(`#results .group[data-group="NOTEBOOK"]`, "reference/contacts.md"),
	)
	tiers := get(t, ctx, "tier groups", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#results .group")].map(g => g.dataset.group)`))
	if strings.Join(tiers, ",") != "FACTS,EPISODES,SKILLS,NOTEBOOK" {
		t.Errorf("tier groups %q", tiers)
	}

	// Live: a page edited on disk shows without a reload.
	run(t, ctx, "open shopping", chromedp.Navigate(url+"/ui/page/lists/shopping.md"), waitText("#live", "live"))
	os.WriteFile(filepath.Join(home, "notebook", "lists", "shopping.md"), []byte("# Shopping\n\n- [ ] Oat milk from the market\n"), 0o644)
	run(t, ctx, "live update", waitText("#view", "Oat milk from the market"))

	// Settings: switch to hello, watch the mode become hybrid, rebuild.
	run(t, ctx, "settings",
		chromedp.Navigate(url+"/ui/settings"),
		chromedp.WaitVisible(css(`.plugin[data-plugin="hello"]`)),
		waitText("#mode", "keyword"),
	)
	shot(t, ctx, "settings")
	run(t, ctx, "use hello",
		chromedp.SendKeys(css("#opt-hello"), "dimensions=64"),
		chromedp.Click(css(`form.use[data-name="hello"] button`)),
		waitText("#provider-status", "hello"),
		waitText("#mode", "hybrid"),
		waitText("#pending", "0"),
	)
	cfg, _ := os.ReadFile(filepath.Join(home, "config.yaml"))
	if !strings.Contains(string(cfg), "hello") {
		t.Errorf("config.yaml does not name hello:\n%s", cfg)
	}
	run(t, ctx, "rebuild",
		chromedp.Click(css("#rebuild")),
		waitText("#rebuild-status", "Rebuilt:"),
		// The rebuilt index gets its vectors again (from the cache).
		chromedp.Navigate(url+"/ui/settings"),
		waitText("#mode", "hybrid"),
		waitText("#pending", "0"),
		waitText("#provider-status", "hello: ready"),
	)
	shot(t, ctx, "settings-hybrid")
	run(t, ctx, "hybrid search",
		chromedp.Navigate(url+"/ui/search?q=marmalade"),
		waitText("#search-mode", "hybrid"),
	)

	// Conversations: the list, a transcript with its compaction and flush.
	run(t, ctx, "sessions",
		chromedp.Navigate(url+"/ui/sessions"),
		chromedp.WaitVisible(css("#sessions")),
	)
	list := text(t, ctx, "#sessions")
	if !strings.Contains(list, "demo") || !strings.Contains(list, "3") {
		t.Errorf("sessions list:\n%s", list)
	}
	shot(t, ctx, "sessions")
	run(t, ctx, "transcript",
		chromedp.Click(css(`#sessions a[href="/ui/session/demo"]`)),
		chromedp.WaitVisible(css("#transcript")),
		waitText("#transcript .compaction", "Summary: the user told"),
		waitText("#transcript .flush", "91000 tokens"),
	)
	order := get(t, ctx, "transcript order", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#transcript > li')).map(li => li.className.split(' ')[0])`))
	if strings.Join(order, ",") != "turn,turn,flush,turn,turn" {
		t.Errorf("transcript entries %q; want the flush receipt before the compaction", order)
	}
	shot(t, ctx, "session")
	run(t, ctx, "conversation search",
		chromedp.Navigate(url+"/ui/sessions?q=staging+password"),
		waitText("#conv-results", "demo"),
		// The list below the results: the whole page was drawn.
		waitText("#sessions", "demo"),
	)

	// Delete with confirmation.
	run(t, ctx, "delete",
		chromedp.Navigate(url+"/ui/notebook?dir=projects"),
		chromedp.Click(css(`button[data-delete="projects/garden.md"]`)),
		chromedp.WaitVisible(css("#confirm-delete")),
		chromedp.Click(css("#delete-yes")),
		chromedp.WaitNotPresent(css(`button[data-delete="projects/garden.md"]`)),
	)
	if _, err := os.Stat(filepath.Join(home, "notebook", "projects", "garden.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("garden.md is still there: %v", err)
	}
	// New page.
	run(t, ctx, "new page",
		chromedp.Navigate(url+"/ui/notebook?dir=lists"),
		chromedp.SetValue(css("#new-path"), "lists/reading"),
		chromedp.Click(css(`#new-page button`)),
		chromedp.WaitVisible(css("#text")),
	)
	if b, err := os.ReadFile(filepath.Join(home, "notebook", "lists", "reading.md")); err != nil || string(b) != "# Reading\n" {
		t.Errorf("the new page: %q, %v", b, err)
	}
}

func TestBrowserSaveConflict(t *testing.T) {
	home := fixture(t, demoPages)
	url := serve(t, home)
	ctx := browser(t, 2*time.Minute)
	page := filepath.Join(home, "notebook", "lists", "todos.md")
	run(t, ctx, "open the editor",
		chromedp.Navigate(url+"/ui/page/lists/todos.md?edit=1"),
		chromedp.WaitVisible(css("#text")),
		eval(t, ctx, `document.querySelector('#text').value += "- [ ] Mine: water the plants\n"`),
	)
	// Meanwhile the agent (or an editor) changes the page on disk.
	theirs := "# To Do\n\n- [ ] Call dentist\n- [ ] Theirs: book flights\n"
	if err := os.WriteFile(page, []byte(theirs), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "the editor is told", waitText("#changed", "changed on disk"))
	run(t, ctx, "save conflicts",
		chromedp.Click(css("#save")),
		chromedp.WaitVisible(css("#conflict")),
	)
	mine, shown := text(t, ctx, "#conflict-mine"), text(t, ctx, "#conflict-theirs")
	if !strings.Contains(mine, "Mine: water the plants") || !strings.Contains(shown, "Theirs: book flights") {
		t.Errorf("the conflict shows mine %q and theirs %q", mine, shown)
	}
	if b, _ := os.ReadFile(page); string(b) != theirs {
		t.Fatalf("the conflicting save overwrote the page:\n%s", b)
	}
	shot(t, ctx, "conflict")
	run(t, ctx, "keep mine",
		chromedp.Click(css("#keep-mine")),
		waitText("#view", "Mine: water the plants"),
	)
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), "Mine: water the plants") || strings.Contains(string(b), "Theirs") {
		t.Errorf("keep mine saved:\n%s", b)
	}
}

// hostile is a page written to run script every way markdown allows, and
// every way its frontmatter (the properties table) and Dataview fields
// (key labels) might.
const hostile = `---
"<img src=x onerror=\"window.__pwned='fmkey'\">": "<script>window.__pwned='fmvalue'</script>"
title: "\" onmouseover=\"window.__pwned='fmquote'"
tags: ["<b onclick=\"window.__pwned='fmtag'\">x</b>"]
related: "[[<img src=x onerror=window.__pwned='fmwiki1'>]]"
friends: ["[[a\" onmouseover=\"window.__pwned='fmwiki2']]"]
homepage: "javascript:window.__pwned='fmjs'"
site: "[[javascript:window.__pwned='fmwiki3']]"
---
` +
	"# Hostile <script>window.__pwned='title'</script>\n\n" +
	"<script>window.__pwned='script'</script>\n\n" +
	"<img src=x onerror=\"window.__pwned='onerror'\">\n\n" +
	"<svg onload=\"window.__pwned='svg'\"></svg>\n\n" +
	"<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>\n\n" +
	"[click me](javascript:window.__pwned='jslink')\n\n" +
	"[data](data:text/html,<script>alert(1)</script>)\n\n" +
	"<a href=\"javascript:window.__pwned='rawlink'\">raw link</a>\n\n" +
	"![img](javascript:window.__pwned='img')\n\n" +
	"[[\" onmouseover=\"window.__pwned='wiki1']]\n\n" +
	"[[<img src=x onerror=window.__pwned='wiki2'>]]\n\n" +
	"[[javascript:window.__pwned='wiki3']]\n\n" +
	"[[contacts|<b onclick=\"window.__pwned='wiki4'\">label</b>]]\n\n" +
	"```html\n<script>window.__pwned='code'</script>\n```\n\n" +
	"[k:: <script>window.__pwned='field'</script>] (<img src=x onerror=\"window.__pwned='fieldkey'\">:: v) [link:: [[javascript:window.__pwned='fieldwiki']]]\n\n" +
	"- works at:: [[a\" onmouseover=\"window.__pwned='linefield']]\n\n" +
	"Hostile marker pwnword <style>body{display:none}</style>\n"

func TestBrowserXSS(t *testing.T) {
	home := fixture(t, map[string]string{"reference/contacts.md": demoPages["reference/contacts.md"], "knowledge/hostile.md": hostile})
	os.WriteFile(filepath.Join(home, "sessions", "evil.jsonl"), []byte(`{"id":"e1","type":"message","role":"user","content":"<script>window.__pwned='session'</script><img src=x onerror=\"window.__pwned='session-img'\"> pwnword","timestamp":"2026-11-20T09:00:00Z"}`+"\n"), 0o644)
	url := serve(t, home)
	ctx := browser(t, 2*time.Minute)

	// What the DOM holds in the page's rendering: no script, no handler
	// attribute, no javascript: or data: URL.
	const audit = `(() => {
		const bad = [];
		for (const el of document.querySelectorAll('#main *')) {
			if (/^(SCRIPT|IFRAME|OBJECT|EMBED|STYLE)$/.test(el.tagName)) bad.push(el.tagName);
			for (const a of el.attributes) {
				if (/^on/i.test(a.name)) bad.push(el.tagName + ' ' + a.name);
				if (/^(href|src|action|formaction|srcdoc)$/i.test(a.name) && /^\s*(javascript|data|vbscript):/i.test(a.value)) bad.push(el.tagName + ' ' + a.name + '=' + a.value);
			}
		}
		return bad;
	})()`
	check := func(where string) {
		t.Helper()
		bad := get(t, ctx, where+": audit", chromedp.Evaluate[[]string](audit))
		pwned := get(t, ctx, where+": pwned", chromedp.Evaluate[*string](`window.__pwned === undefined ? null : String(window.__pwned)`))
		if len(bad) > 0 {
			t.Errorf("%s: the DOM holds %q", where, bad)
		}
		if pwned != nil {
			t.Errorf("%s: a script of the page ran: window.__pwned = %v", where, *pwned)
		}
	}

	run(t, ctx, "hostile page",
		chromedp.Navigate(url+"/ui/page/knowledge/hostile.md"),
		chromedp.WaitVisible(css("#view")),
		waitText("#view", "Hostile marker"),
	)
	hrefs := get(t, ctx, "links", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#view a')).map(a => a.getAttribute('href') || '')`))
	check("page view")
	// Click every link of the page (javascript: links would run now), and
	// hover the wikilinks.
	for i, h := range hrefs {
		if h == "" || strings.HasPrefix(h, "/") || strings.HasPrefix(h, "#") {
			continue // this page or another dashboard page: nothing to run
		}
		run(t, ctx, "click a link", eval(t, ctx, fmt.Sprintf(`(() => { const a = document.querySelectorAll('#view a')[%d]; a.dispatchEvent(new MouseEvent('mouseover', {bubbles: true})); a.click(); })()`, i)), chromedp.Sleep(50*time.Millisecond))
	}
	check("page view after clicks")
	wikis := get(t, ctx, "wikilinks", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#view a.wikilink')).map(a => a.getAttribute('href') + ' ' + a.textContent)`))
	for _, w := range wikis {
		if !strings.HasPrefix(w, "/ui/") {
			t.Errorf("a wikilink leaves the dashboard: %q", w)
		}
	}
	// 4 in the body, 3 in the properties, 2 in fields.
	if len(wikis) != 9 {
		t.Errorf("wikilinks %q, want 9", wikis)
	}
	// The editor's live preview inserts rendered HTML into the page.
	run(t, ctx, "preview",
		chromedp.Click(css("#edit")),
		chromedp.WaitVisible(css("#text")),
		waitText("#preview", "Hostile marker"),
	)
	check("editor preview")
	shot(t, ctx, "xss")
	// Search results and transcripts show page and session text too.
	run(t, ctx, "search", chromedp.Navigate(url+"/ui/search?q=pwnword&sessions=1"), waitText("#results", "knowledge/hostile.md"), waitText("#results", "evil"))
	check("search results")
	run(t, ctx, "as you type", chromedp.Navigate(url+"/ui/search"), chromedp.SendKeys(css("#q"), "script pwned"), waitText("#results", "NOTEBOOK"), chromedp.Sleep(300*time.Millisecond))
	check("search as you type")
	run(t, ctx, "transcript", chromedp.Navigate(url+"/ui/session/evil"), waitText("#transcript", "pwnword"))
	check("transcript")
	shown := text(t, ctx, "#transcript .turn-text")
	if !strings.Contains(shown, "<script>") {
		t.Errorf("the transcript does not show its text as text: %q", shown)
	}
}

// TestBrowserModels: the models folder from the settings: a pull by URL
// (an httptest server stands for the model's host) shows its progress
// while the download runs (the server holds the second half back until
// the test has seen it), in bytes and percent or, when the server gives no
// size, in bytes; the result stays shown once the list has the model;
// remove asks first, then removes it.
func TestBrowserModels(t *testing.T) {
	const size = 4 << 20
	release := make(chan struct{}) // one value lets one download finish
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "unsized") {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		half := make([]byte, size/2)
		w.Write(half)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Write(half)
	}))
	defer srv.Close()
	defer close(release)
	home := fixture(t, demoPages)
	url := serve(t, home)
	ctx := browser(t, 2*time.Minute)
	run(t, ctx, "pull",
		chromedp.Navigate(url+"/ui/settings"),
		chromedp.WaitVisible(css("#pull-model")),
		chromedp.SendKeys(css("#pull-model"), srv.URL+"/tiny-test.gguf"),
		chromedp.Click(css("#pull button")),
		waitText("#pull-status", " of 4.0 MB ("),
	)
	mid := text(t, ctx, "#pull-status")
	if m := regexp.MustCompile(`^[\d.]+ [KM]?B of 4\.0 MB \((\d+)%\)$`).FindStringSubmatch(mid); m == nil || m[1] == "100" {
		t.Errorf("half-way the pull box shows %q; want bytes of the total and a percent below 100", mid)
	}
	if bar := get(t, ctx, "progress bar", chromedp.Evaluate[float64](`(() => { const b = document.querySelector('#pull-progress'); return b.hidden ? -1 : b.value / b.max })()`)); bar <= 0 || bar >= 1 {
		t.Errorf("half-way the progress bar is at %v", bar)
	}
	release <- struct{}{}
	run(t, ctx, "pull ends",
		waitText("#pull-status", "Pulled"),
		waitText("#models", "tiny-test.gguf"),
	)
	// The list was drawn again with the model: the pull's result is still said.
	if got := text(t, ctx, "#pull-status"); got != "Pulled tiny-test.gguf" {
		t.Errorf("after the list shows the model, the pull box says %q", got)
	}
	run(t, ctx, "pull without a size",
		chromedp.SetValue(css("#pull-model"), srv.URL+"/tiny-unsized.gguf"),
		chromedp.Click(css("#pull button")),
		waitText("#pull-status", " so far"),
	)
	if mid := text(t, ctx, "#pull-status"); !regexp.MustCompile(`^[\d.]+ [KM]?B so far$`).MatchString(mid) {
		t.Errorf("half-way a pull of unknown size shows %q; want the bytes so far", mid)
	}
	release <- struct{}{}
	run(t, ctx, "unsized pull ends",
		waitText("#models", "tiny-unsized.gguf"),
		waitText("#pull-status", "Pulled tiny-unsized.gguf"),
	)
	if fi, err := os.Stat(filepath.Join(home, "models", "tiny-test.gguf")); err != nil || fi.Size() != size {
		t.Fatalf("the pulled model: %v %v", fi, err)
	}
	run(t, ctx, "remove, cancelled",
		chromedp.Click(css(`button[data-rm-model="tiny-test.gguf"]`)),
		chromedp.WaitVisible(css("#confirm-rm")),
		chromedp.Click(css(`#confirm-rm button[value="cancel"]`)),
		chromedp.WaitNotVisible(css("#confirm-rm")),
	)
	if _, err := os.Stat(filepath.Join(home, "models", "tiny-test.gguf")); err != nil {
		t.Fatalf("a cancelled remove removed the model: %v", err)
	}
	run(t, ctx, "remove",
		chromedp.Click(css(`button[data-rm-model="tiny-test.gguf"]`)),
		chromedp.WaitVisible(css("#confirm-rm")),
		chromedp.Click(css("#rm-yes")),
		chromedp.WaitNotPresent(css(`button[data-rm-model="tiny-test.gguf"]`)),
	)
	if _, err := os.Stat(filepath.Join(home, "models", "tiny-test.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the model is still there: %v", err)
	}
}

// scheme asks for the light or dark colour scheme.
func scheme(name string) step {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: name}}})
		return err
	})
}

// TestBrowserPageReadable: an entity page shows its frontmatter as a
// properties table and its fields as labels; in both colour schemes body
// text is the text colour at 7:1 or more on its card (WCAG AAA), links
// stand out from it (underlined, or 3:1 against the text) at 4.5:1 on
// the card.
func TestBrowserPageReadable(t *testing.T) {
	home := fixture(t, map[string]string{
		"knowledge/entities/sarah-chen.md": sarahChen + "\nSee [the site](https://example.com/) and [[acme-corp]].\n",
		"knowledge/entities/acme-corp.md":  "# Acme Corp\n",
	})
	url := serve(t, home)
	ctx := browser(t, 2*time.Minute)
	const measure = `(() => {
		const rgb = (s) => s.match(/[\d.]+/g).slice(0, 4).map(Number);
		const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
		const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
		const bg = (el) => { for (; el; el = el.parentElement) { const c = rgb(getComputedStyle(el).backgroundColor); if (c.length < 4 || c[3] > 0) return c; } return [255, 255, 255]; };
		const p = [...document.querySelectorAll('#view .md p')].find((e) => e.textContent.includes('See '));
		const a = p.querySelector('a[href^="https:"]');
		const text = rgb(getComputedStyle(p).color), link = rgb(getComputedStyle(a).color), back = bg(p);
		return { text: ratio(text, back), link: ratio(link, back), linkText: ratio(link, text), underlined: getComputedStyle(a).textDecorationLine.includes('underline') };
	})()`
	type figures struct {
		Text, Link, LinkText float64
		Underlined           bool
	}
	for _, s := range []string{"dark", "light"} {
		run(t, ctx, s+" page",
			scheme(s),
			chromedp.Navigate(url+"/ui/page/knowledge/entities/sarah-chen.md"),
			waitText("#view table.props", "Sarah Chen"),
			waitText("#view", "Met at the conference"),
		)
		f := get(t, ctx, s+": colours", chromedp.Evaluate[figures](measure))
		if f.Text < 7 {
			t.Errorf("%s: body text contrast %.2f:1 on its card, want 7:1 or more", s, f.Text)
		}
		if f.Link < 4.5 {
			t.Errorf("%s: link contrast %.2f:1 on its card, want 4.5:1 or more", s, f.Link)
		}
		if !f.Underlined && f.LinkText < 3 {
			t.Errorf("%s: links are not underlined and differ from the text by %.2f:1, want 3:1", s, f.LinkText)
		}
		label := text(t, ctx, "#view .field-key")
		if label != "seen" {
			t.Errorf("%s: the first field label reads %q", s, label)
		}
		shot(t, ctx, "entity-"+s)
	}
}

// TestBrowserSkills: the skills page lists a proposed skill with its
// counts from the conversations and the candidates; Accept sets the
// page's status, on disk.
func TestBrowserSkills(t *testing.T) {
	home := t.TempDir()
	page := "---\nname: Read → Edit → Bash\nslug: read-edit-bash\nstatus: proposed\ntools:\n  - Read\n  - Edit\n  - Bash\n---\n\n# Read → Edit → Bash\n"
	writeHome(t, home, map[string]string{"skills/learned/read-edit-bash.md": page}, nil)
	for i, s := range []string{"s1", "s2", "s3"} {
		var lines []string
		for j, tool := range []string{"", "Read", "Edit", "Bash"} {
			turn := map[string]any{"id": fmt.Sprintf("%s-%d", s, j), "type": "message", "role": "user", "content": "fix the build", "timestamp": fmt.Sprintf("2026-11-2%dT09:00:0%dZ", i, j)}
			if tool != "" {
				turn["role"], turn["content"], turn["metadata"] = "tool", "ran "+tool, map[string]any{"tool": tool}
			}
			b, _ := json.Marshal(turn)
			lines = append(lines, string(b))
		}
		os.WriteFile(filepath.Join(home, "sessions", s+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	}
	url := serve(t, home)
	ctx := browser(t, time.Minute)
	run(t, ctx, "skills page",
		chromedp.Navigate(url+"/ui/skills"),
		waitText(`#skills tr[data-slug="read-edit-bash"]`, "Read → Edit → Bash"),
		waitText(`#skills tr[data-slug="read-edit-bash"] .status`, "proposed"),
	)
	if row := text(t, ctx, `#skills tr[data-slug="read-edit-bash"]`); !strings.Contains(row, "100%") || !strings.Contains(row, "3") {
		t.Errorf("the skill's row: %q", row)
	}
	run(t, ctx, "accept",
		chromedp.Click(css(`button.skill-review[data-status="accepted"]`)),
		waitText(`#skills tr[data-slug="read-edit-bash"] .status`, "accepted"),
	)
	if b, _ := os.ReadFile(filepath.Join(home, "notebook", "skills", "learned", "read-edit-bash.md")); !strings.Contains(string(b), "status: accepted\n") {
		t.Errorf("the page after Accept:\n%s", b)
	}
}
