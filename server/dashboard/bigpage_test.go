package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/memhost/memhost/server/dashboard"
)

// TestBigPage: a 24 MiB page is shown as its first MiB of plain text with
// a note, never read whole: the answer and the memory the request
// allocates stay around a MiB, not the page's size (a 128 MB page took
// 1.7 GB). The page has no editor (its start must never be saved over the
// whole), and its JSON has no hash a save could name.
func TestBigPage(t *testing.T) {
	h := openHome(t, map[string]string{"lists/todo.md": "# To do\n"}, noon)
	const size = 24 << 20
	line := "a line of a long log, <b>escaped</b> & kept as text\n"
	big := "# Big\n" + strings.Repeat(line, size/len(line))
	if err := os.WriteFile(filepath.Join(h.NotebookDir(), "big.md"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	fileSize := len(big)
	big = ""
	d := dashboard.New(h)
	serve := func(target string) (*httptest.ResponseRecorder, uint64) {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w := httptest.NewRecorder()
		d.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		runtime.ReadMemStats(&after)
		return w, after.TotalAlloc - before.TotalAlloc
	}

	w, alloc := serve("/ui/page/big.md")
	body := w.Body.String()
	checkPage(t, "/ui/page/big.md", w.Code, body)
	if !strings.Contains(body, "too large to render") || !strings.Contains(body, "open it in an editor") || !strings.Contains(body, "&lt;b&gt;escaped&lt;/b&gt; &amp; kept") {
		t.Errorf("the big page does not show its start as text with a note:\n%.2000s", body)
	}
	if strings.Contains(body, `id="editor"`) || strings.Contains(body, `id="edit"`) || strings.Contains(body, `<textarea`) {
		t.Error("the big page offers an editor")
	}
	if n := len(body); n > 3<<20 {
		t.Errorf("the big page's answer is %d bytes", n)
	}
	if alloc > 24<<20 {
		t.Errorf("showing the big page allocated %d MiB", alloc>>20)
	}
	t.Logf("page: %d bytes, %d MiB allocated", len(body), alloc>>20)

	w, alloc = serve("/ui/api/page/big.md")
	var got struct {
		Page struct {
			Hash      string `json:"hash"`
			Text      string `json:"text"`
			Truncated bool   `json:"truncated"`
			SizeBytes int64  `json:"sizeBytes"`
		} `json:"page"`
		HTML string `json:"html"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || w.Code != http.StatusOK {
		t.Fatalf("the big page's JSON: %d %v", w.Code, err)
	}
	if !got.Page.Truncated || got.Page.Hash != "" || got.Page.SizeBytes != int64(fileSize) || len(got.Page.Text) > 1<<20 || !strings.Contains(got.HTML, "too large to render") {
		t.Errorf("the big page's JSON: truncated %v, hash %q, size %d, text %d bytes, html %.200q", got.Page.Truncated, got.Page.Hash, got.Page.SizeBytes, len(got.Page.Text), got.HTML)
	}
	if n := w.Body.Len(); n > 6<<20 || alloc > 48<<20 {
		t.Errorf("the big page's JSON: %d bytes, %d MiB allocated", n, alloc>>20)
	}
}

// TestSlowPageShownAsText: a page within the size cap that goldmark would
// take minutes over (blocks nested half a million deep) is shown as text
// once the render budget (5 s) runs out, editor and all.
func TestSlowPageShownAsText(t *testing.T) {
	h := openHome(t, map[string]string{"nested.md": strings.Repeat("> ", 500_000) + "deep\n"}, noon)
	d := dashboard.New(h)
	w := httptest.NewRecorder()
	d.ServeHTTP(w, httptest.NewRequest("GET", "/ui/page/nested.md", nil))
	body := w.Body.String()
	checkPage(t, "/ui/page/nested.md", w.Code, body)
	if !strings.Contains(body, "took longer than") || !strings.Contains(body, `id="editor"`) {
		t.Errorf("the slow page is not shown as text with its editor:\n%.2000s", body)
	}
}
