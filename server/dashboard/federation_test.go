package dashboard_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/server/dashboard"
)

// The page two homes change on the same line: a, syncing second, keeps
// its own version and the other side's in a sibling page.
const (
	decisionBase = "# Decision\n\n- venue: undecided\n- budget: 100\n"
	decisionA    = "# Decision\n\n- venue: the old mill\n- budget: 100\n"
	decisionB    = "# Decision\n\n- venue: the lake house\n- budget: 100\n"
)

// openFedHost opens a home with its config.yaml (made by Init) and the
// given commit author.
func openFedHost(t testing.TB, home, author string) *host.Host {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Load(filepath.Join(home, "config.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Federation.Author = author
	h, err := host.Open(ctx, host.Options{Home: home, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Init(ctx, memhost.InitRequest{}); err != nil {
		h.Close()
		t.Fatal(err)
	}
	return h
}

// conflictHomes makes a real conflict with real git: a bare repository,
// home a with knowledge/decision.md, home b synced from it; b changes
// the venue line and syncs, then a changes the same line and syncs (the
// merge keeps both sides). It returns both homes (closed) and the
// sibling page's notebook path.
func conflictHomes(t testing.TB) (homeA, homeB, sibling string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	remote := filepath.Join(t.TempDir(), "memory.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", "-b", "main", remote).CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	homeA, homeB = filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	page := filepath.Join(homeA, "notebook", "knowledge", "decision.md")
	os.MkdirAll(filepath.Dir(page), 0o755)
	if err := os.WriteFile(page, []byte(decisionBase), 0o644); err != nil {
		t.Fatal(err)
	}
	a := openFedHost(t, homeA, "a <a@test>")
	defer a.Close()
	if r, err := a.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil || r.SyncError != "" {
		t.Fatalf("a: git init: %v %s", err, r.SyncError)
	}
	b := openFedHost(t, homeB, "b <b@test>")
	defer b.Close()
	if r, err := b.GitInit(ctx, memhost.GitInitRequest{Remote: remote}); err != nil || r.SyncError != "" {
		t.Fatalf("b: git init: %v %s", err, r.SyncError)
	}
	// Both edit the page in an editor: the sync commits the edit first.
	if err := os.WriteFile(filepath.Join(homeB, "notebook", "knowledge", "decision.md"), []byte(decisionB), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.FedSync(ctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatalf("b: sync: %v", err)
	}
	if err := os.WriteFile(page, []byte(decisionA), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := a.FedSync(ctx, memhost.FedSyncRequest{})
	if err != nil {
		t.Fatalf("a: sync: %v", err)
	}
	if len(res.Conflicts) != 1 || res.Conflicts[0].Path != "notebook/knowledge/decision.md" {
		out, _ := exec.Command("git", "-C", homeA, "log", "--graph", "--stat", "--format=%an %s").CombinedOutput()
		t.Fatalf("a's sync kept both sides of %v; want notebook/knowledge/decision.md\n%s", res.Conflicts, out)
	}
	return homeA, homeB, strings.TrimPrefix(res.Conflicts[0].Sibling, "notebook/")
}

func fetchUI(t testing.TB, d *dashboard.Dashboard, url string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// TestHomeFederationCard: the home screen of a home whose merge kept
// both sides of a page shows the git sync card, with the page and its
// sibling linked and what to do; the links open the two versions.
func TestHomeFederationCard(t *testing.T) {
	homeA, _, sibling := conflictHomes(t)
	h := openFedHost(t, homeA, "a <a@test>")
	defer h.Close()
	d := dashboard.New(h)
	code, body := fetchUI(t, d, "/")
	if code != 200 {
		t.Fatalf("GET /: %d\n%s", code, body)
	}
	for _, want := range []string{
		`id="fed"`, "memory.git</code>", `<dd id="fed-branch"><code>main</code> at <code>`,
		`<dd id="fed-failures">none</dd>`, "1 page changed on both sides",
		`<a class="fed-page" href="/ui/page/knowledge/decision.md">knowledge/decision.md</a>`,
		`<a class="fed-sibling" href="/ui/page/` + sibling + `">` + filepath.Base(sibling) + `</a>`,
		"both sides changed the same lines", "then delete the sibling",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the home lacks %q:\n%s", want, body)
		}
	}
	if !regexp.MustCompile(`<dd id="fed-last"><time datetime="20\d\d-`).MatchString(body) {
		t.Errorf("no last sync time:\n%s", body)
	}
	if strings.Contains(body, `id="fed-error"`) {
		t.Errorf("an error is shown after a successful sync:\n%s", body)
	}
	// The links open the two versions.
	for url, want := range map[string]string{"/ui/page/knowledge/decision.md": "the old mill", "/ui/page/" + sibling: "the lake house"} {
		if code, page := fetchUI(t, d, url); code != 200 || !strings.Contains(page, want) {
			t.Errorf("GET %s: %d, want %q in:\n%s", url, code, want, page)
		}
	}
	// Removing the sibling resolves the conflict: the card no longer lists it.
	if _, err := h.Remove(context.Background(), memhost.RemoveRequest{Path: sibling}); err != nil {
		t.Fatal(err)
	}
	if _, body := fetchUI(t, d, "/"); !strings.Contains(body, `id="fed"`) || strings.Contains(body, "fed-conflicts") {
		t.Errorf("after the sibling's removal the home shows:\n%s", body)
	}
}

// TestHomeFederationFailures: a remote that cannot be reached shows as
// failed syncs with the error; a home that is not a git repository has
// no card.
func TestHomeFederationFailures(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ctx := context.Background()
	home := t.TempDir()
	h := openFedHost(t, home, "a <a@test>")
	defer h.Close()
	d := dashboard.New(h)
	if _, body := fetchUI(t, d, "/"); strings.Contains(body, `id="fed"`) {
		t.Errorf("a home without git has the card:\n%s", body)
	}
	missing := filepath.Join(t.TempDir(), "gone.git")
	r, err := h.GitInit(ctx, memhost.GitInitRequest{Remote: missing})
	if err != nil || r.SyncError == "" {
		t.Fatalf("git init with a missing remote: %v, sync error %q", err, r.SyncError)
	}
	h.FedSync(ctx, memhost.FedSyncRequest{})
	_, body := fetchUI(t, d, "/")
	for _, want := range []string{`id="fed"`, "gone.git</code>", "2 in a row", `id="fed-error"`, "cannot reach", `<dd id="fed-last">never</dd>`} {
		if !strings.Contains(body, want) {
			t.Errorf("the home lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "fed-conflicts") {
		t.Errorf("conflicts shown without any:\n%s", body)
	}
	// A token in the remote's URL is not shown.
	if _, err := h.GitInit(ctx, memhost.GitInitRequest{Remote: "https://me:s3cr3t-token@127.0.0.1:1/memory.git"}); err != nil {
		t.Fatal(err)
	}
	_, body = fetchUI(t, d, "/")
	if strings.Contains(body, "s3cr3t-token") || !strings.Contains(body, "https://me:xxxxx@127.0.0.1:1/memory.git") {
		t.Errorf("the remote with a token shows as:\n%s", body)
	}
}

// TestBrowserFederationConflict: a real conflict (two homes, a bare
// repository, the same line changed on both) on the home screen of the
// home that merged it, in chromium: the card lists the page and its
// sibling, both links open their version, and deleting the sibling from
// its page clears the conflict. Then a second conflict, merged by
// `memhost sync --remote` (another Host on the home) while the home
// screen is open, shows up on it live.
func TestBrowserFederationConflict(t *testing.T) {
	chromiumPath(t)
	homeA, homeB, sibling := conflictHomes(t)
	cfg, err := config.Load(filepath.Join(homeA, "config.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	fed := fmt.Sprintf("federation:\n  remote: %q\n  pushIntervalSec: 5\n  author: a <a@test>\n", cfg.Federation.Remote)
	if err := os.WriteFile(filepath.Join(homeA, "config.yaml"), []byte(fed), 0o644); err != nil {
		t.Fatal(err)
	}
	url := serve(t, homeA)
	ctx := browser(t, 2*time.Minute)
	run(t, ctx, "home",
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(css("#fed")),
		waitText("#fed", "1 page changed on both sides"),
		waitText("#live", "live"),
	)
	card := text(t, ctx, "#fed")
	for _, want := range []string{"memory.git", "main at", "Last sync", "Failures", "none", "knowledge/decision.md", filepath.Base(sibling), "delete the sibling"} {
		if !strings.Contains(card, want) {
			t.Errorf("the git sync card lacks %q:\n%s", want, card)
		}
	}
	links := get(t, ctx, "links", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#fed-conflicts a')).map(a => a.className + ' ' + a.getAttribute('href'))`))
	if strings.Join(links, ",") != "fed-page /ui/page/knowledge/decision.md,fed-sibling /ui/page/"+sibling {
		t.Errorf("the conflict's links: %q", links)
	}
	shot(t, ctx, "federation")
	run(t, ctx, "open the page",
		chromedp.Click(css("a.fed-page")),
		chromedp.WaitVisible(css("#view")),
		waitText("#view", "the old mill"),
	)
	run(t, ctx, "open the sibling",
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(css("a.fed-sibling")),
		chromedp.Click(css("a.fed-sibling")),
		chromedp.WaitVisible(css("#view")),
		waitText("#view", "the lake house"),
	)
	run(t, ctx, "delete the sibling",
		chromedp.Click(css(`button[data-delete="`+sibling+`"]`)),
		chromedp.WaitVisible(css("#confirm-delete")),
		chromedp.Click(css("#delete-yes")),
		chromedp.WaitVisible(css("#files")),
	)
	if _, err := os.Stat(filepath.Join(homeA, "notebook", filepath.FromSlash(sibling))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the sibling is still there: %v", err)
	}
	run(t, ctx, "resolved",
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible(css("#fed")),
	)
	if n := get(t, ctx, "conflicts left", chromedp.Evaluate[int](`document.querySelectorAll('#fed-conflicts li').length`)); n != 0 {
		t.Errorf("%d conflicts listed after the sibling was deleted", n)
	}

	// Live: the server's own sync loop merges a second conflict while the
	// home screen is open. b changes the venue again and pushes, and a
	// changes it in an editor, both between two of a's syncs (every 5 s):
	// the next one merges them.
	bctx := context.Background()
	b := openFedHost(t, homeB, "b <b@test>")
	defer b.Close()
	if _, err := b.FedSync(bctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatalf("b: sync: %v", err)
	}
	waitLoopSync(t, homeA)
	os.WriteFile(filepath.Join(homeA, "notebook", "knowledge", "decision.md"), []byte(strings.Replace(decisionA, "the old mill", "the barn", 1)), 0o644)
	os.WriteFile(filepath.Join(homeB, "notebook", "knowledge", "decision.md"), []byte(strings.Replace(decisionA, "the old mill", "the boathouse", 1)), 0o644)
	if _, err := b.FedSync(bctx, memhost.FedSyncRequest{}); err != nil {
		t.Fatalf("b: sync: %v", err)
	}
	run(t, ctx, "the new conflict shows without a reload",
		waitText("#fed", "1 page changed on both sides"),
		chromedp.WaitVisible(css(`a.fed-sibling`)),
	)
	if got := text(t, ctx, "#fed-conflicts"); strings.Contains(got, filepath.Base(sibling)) {
		t.Errorf("the resolved conflict is listed again: %s", got)
	}
	data, _ := os.ReadFile(filepath.Join(homeA, "notebook", "knowledge", "decision.md"))
	if !strings.Contains(string(data), "the barn") {
		t.Errorf("a's page after the merge:\n%s", data)
	}
}

// waitLoopSync waits until the serve loop of home ends a sync (it
// rewrites .git/memhost/state.json).
func waitLoopSync(t *testing.T, home string) {
	t.Helper()
	p := filepath.Join(home, ".git", "memhost", "state.json")
	before, _ := os.Stat(p)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if fi, err := os.Stat(p); err == nil && (before == nil || !fi.ModTime().Equal(before.ModTime())) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the serve loop did not sync in 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
