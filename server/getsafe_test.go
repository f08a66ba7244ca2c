package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memhost/memhost/server/dashboard/pagehtml"
)

// TestSettingsStartsNoPlugin: listing the plugins starts each one (its
// version, model and status are the plugin's to say), and a provider that
// starts without its model downloads it. Opening the settings (a GET)
// starts none; the page's script asks for the list with a POST. The spy
// plugin is a script that records each start.
func TestSettingsStartsNoPlugin(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	spy := filepath.Join(home, "plugins", "memhost-embeddings-spy")
	started := filepath.Join(home, "spy-started")
	if err := os.WriteFile(spy, []byte("#!/bin/sh\necho started >> '"+started+"'\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := start(t, home, "127.0.0.1:0", "health:\n  everyMin: 0\n")
	code, body, _ := do(t, "GET", r.info.URL+"/ui/settings", "")
	if code != 200 {
		t.Fatalf("GET /ui/settings: %d\n%s", code, body)
	}
	if _, err := os.Stat(started); err == nil {
		t.Fatal("GET /ui/settings started a plugin")
	}
	if !strings.Contains(body, `id="plugins-box"`) {
		t.Errorf("the settings have no box for the plugin list:\n%s", body)
	}
	code, body, _ = do(t, "POST", r.info.URL+"/ui/api/plugins", "", "Origin", r.info.URL)
	if code != 200 || !strings.Contains(body, "spy") {
		t.Fatalf("POST /ui/api/plugins: %d\n%s", code, body)
	}
	if _, err := os.Stat(started); err != nil {
		t.Fatalf("the plugin list did not start the spy, so the GET proved nothing: %v", err)
	}
}

// TestDebugPageCapped: the debug API's page read, a GET any web page could
// once send with an image, reads at most what the dashboard shows of a
// page (pagehtml.MaxRenderBytes), never the whole of a large one; a page
// within the bound answers as before.
func TestDebugPageCapped(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "notebook"), 0o755)
	big := "# Big\n\n" + strings.Repeat("all work and no play makes a big page\n", 3*(1<<20)/38)
	os.WriteFile(filepath.Join(home, "notebook", "big.md"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(home, "notebook", "small.md"), []byte("# Small\r\n\r\nline\n"), 0o644)
	r := start(t, home, "127.0.0.1:0", "health:\n  everyMin: 0\n")

	code, body, _ := do(t, "GET", r.info.URL+"/api/debug/notebook/big.md", "")
	var got struct {
		Path       string `json:"path"`
		Content    string `json:"content"`
		TotalLines *int   `json:"totalLines"`
		Truncated  bool   `json:"truncated"`
		SizeBytes  int64  `json:"sizeBytes"`
	}
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
		t.Fatalf("GET big.md: %d %v %.200s", code, err, body)
	}
	if len(got.Content) > pagehtml.MaxRenderBytes || !strings.HasPrefix(big, got.Content) || !got.Truncated || got.SizeBytes != int64(len(big)) || got.TotalLines != nil {
		t.Errorf("GET big.md: %d bytes of content (bound %d), truncated %v, sizeBytes %d (want %d), totalLines %v", len(got.Content), pagehtml.MaxRenderBytes, got.Truncated, got.SizeBytes, len(big), got.TotalLines)
	}

	code, body, _ = do(t, "GET", r.info.URL+"/api/debug/notebook/small", "")
	var small map[string]any
	if err := json.Unmarshal([]byte(body), &small); code != 200 || err != nil {
		t.Fatalf("GET small: %d %v %s", code, err, body)
	}
	want := map[string]any{"path": "small.md", "content": "# Small\n\nline\n", "totalLines": float64(3)}
	if len(small) != len(want) {
		t.Errorf("GET small: %v, want %v", small, want)
	}
	for k, v := range want {
		if small[k] != v {
			t.Errorf("GET small: %s is %#v, want %#v", k, small[k], v)
		}
	}
}
