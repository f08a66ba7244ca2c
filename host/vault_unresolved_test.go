package host

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/health"
)

// TestUnresolvedCountFollowsWrites: status's count of unresolved links,
// kept between calls, follows every change of what links can find,
// through the real index: a page written (by this host or another process
// on the same home) drops it, the page removed raises it again, and so do
// an attachment added and removed, which no index write tells.
func TestUnresolvedCountFollowsWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "notes/a.md", "# A\n[[Missing Page]] and [b](../other/Missing%20Page.md) and ![[chart.png]]\n")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	count := func(want int, when string) {
		t.Helper()
		for range 2 { // computed, then kept
			st, err := h.Status(ctx, memhost.StatusRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if st.UnresolvedLinks != want {
				t.Fatalf("%s: %d unresolved links, want %d", when, st.UnresolvedLinks, want)
			}
		}
	}
	count(3, "at first")

	if _, err := h.Write(ctx, memhost.WriteRequest{Path: "other/Missing Page.md", Text: "# Here now\n"}); err != nil {
		t.Fatal(err)
	}
	count(1, "after the page is written") // [[Missing Page]] finds it by name, [b](...) by its path

	// Another process (a second Host on the same home) removes it.
	other := openHost(t, h.Home(), nil)
	if _, err := other.Remove(ctx, memhost.RemoveRequest{Path: "other/Missing Page.md"}); err != nil {
		t.Fatal(err)
	}
	count(3, "after another process removed the page")

	png := filepath.Join(h.NotebookDir(), "img", "chart.png")
	os.MkdirAll(filepath.Dir(png), 0o755)
	if err := os.WriteFile(png, []byte("\x89PNG"), 0o644); err != nil {
		t.Fatal(err)
	}
	count(2, "after the attachment is added")
	os.Remove(png)
	count(3, "after the attachment is removed")

	// memhost links --unresolved lists the same, from the same cache.
	un, err := h.Links(ctx, memhost.LinksRequest{Unresolved: true})
	if err != nil || len(un.Unresolved) != 3 || un.Unresolved[1].Target != "../other/Missing Page.md" || !un.Unresolved[1].Markdown {
		t.Fatalf("unresolved %+v, %v", un.Unresolved, err)
	}
}

// TestHealthLinks: health's links check (of the indexed pages, as status
// counts them) passes with every link found, and names the count, three
// examples and memhost links --unresolved when some are not, still
// passing: links to pages not written yet are common in a vault.
func TestHealthLinks(t *testing.T) {
	t.Parallel()
	h := healthyHost(t)
	writePage(t, h, "a.md", "# A\n[[b]]\n")
	writePage(t, h, "b.md", "# B\n[a](a.md)\n")
	sync := func() {
		if _, err := h.Sync(context.Background(), memhost.SyncRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	sync()
	r := checkHealth(t, h, memhost.HealthRequest{})
	if c := status(t, r, "links"); c.Status != health.Pass || r.Overall != health.Healthy {
		t.Fatalf("links %+v, overall %s", c, r.Overall)
	}
	writePage(t, h, "c.md", "# C\n[[x1]] [[x2]]\n\n[three](x3.md) [[x4]]\n")
	sync()
	r = checkHealth(t, h, memhost.HealthRequest{})
	c := status(t, r, "links")
	want := "4 links find no page or attachment (c.md:2 → x1, c.md:2 → x2, c.md:4 → x3.md, ...): see memhost links --unresolved"
	if c.Status != health.Pass || c.Message != want || c.Metadata["unresolved"] != 4 || r.Overall != health.Healthy {
		t.Fatalf("links %+v, overall %s; want a passing check saying %q", c, r.Overall, want)
	}
	if b, err := os.ReadFile(r.ReportPath); err != nil || !strings.Contains(string(b), "memhost links --unresolved") {
		t.Fatalf("the report does not hold the check: %v\n%s", err, b)
	}
	writePage(t, h, "c.md", "# C\n[[x1]]\n")
	sync()
	if c := status(t, checkHealth(t, h, memhost.HealthRequest{}), "links"); c.Message != "1 link finds no page or attachment (c.md:2 → x1): see memhost links --unresolved" {
		t.Fatalf("one link: %+v", c)
	}
}

// TestUnresolvedConcurrent: status, links --unresolved and writes at once
// (under -race), and the count right when they are done.
func TestUnresolvedConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	writePage(t, h, "a.md", "# A\n[[p0]] [[p1]] [[p2]] [[p3]] [x](p4.md)\n")
	if _, err := h.Sync(ctx, memhost.SyncRequest{}); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 10)
	for i := range 5 {
		go func() {
			_, err := h.Write(ctx, memhost.WriteRequest{Path: fmt.Sprintf("p%d.md", i), Text: "# here\n"})
			errs <- err
		}()
		go func() {
			var err error
			if i%2 == 0 {
				_, err = h.Status(ctx, memhost.StatusRequest{})
			} else {
				_, err = h.Links(ctx, memhost.LinksRequest{Unresolved: true})
			}
			errs <- err
		}()
	}
	for range 10 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if st, err := h.Status(ctx, memhost.StatusRequest{}); err != nil || st.UnresolvedLinks != 0 {
		t.Fatalf("%d unresolved after every page was written, %v", st.UnresolvedLinks, err)
	}
}
