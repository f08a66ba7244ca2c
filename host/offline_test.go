package host

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/modelstore"
	"github.com/memhost/memhost/registry"
)

// offlineHome is a home as installed offline: a plugin named local
// (the faulty test plugin, which writes its pid to pidFile as it starts),
// the example notebook, no model, and a failed download of the default
// model recorded by a real attempt at an unreachable address, at ago.
func offlineHome(t *testing.T, ago time.Duration) (home, pidFile string) {
	t.Helper()
	home = t.TempDir()
	b, err := os.ReadFile(pluginBinary(t, "faulty"))
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(home, "plugins"), 0o755)
	if err := os.WriteFile(filepath.Join(home, "plugins", registry.Prefix+"local"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	copyTree(t, "../examples/notebook", filepath.Join(home, "notebook"))
	store := &modelstore.Store{Dir: filepath.Join(home, "models")}
	os.MkdirAll(store.Dir, 0o755)
	ref := modelstore.Ref{Name: modelstore.DefaultName, Path: filepath.Join(store.Dir, modelstore.DefaultName), URL: "http://127.0.0.1:1/" + modelstore.DefaultName}
	if err := store.Pull(context.Background(), ref, nil); err == nil {
		t.Fatal("a download from 127.0.0.1:1 succeeded")
	}
	f, ok := store.LastFailure(modelstore.DefaultName)
	if !ok || !f.Offline {
		t.Fatalf("no offline failure recorded: %+v %v", f, ok)
	}
	f.At = f.At.Add(-ago)
	rewriteFailure(t, store, f)
	pidFile = filepath.Join(home, "plugin.pid")
	t.Setenv("MEMHOST_FAULTY_PID_FILE", pidFile)
	return home, pidFile
}

// TestOfflineRecallStartsNoPlugin: with the model missing and its last
// download failed moments ago, a recall answers by keyword with the words
// the local plugin gives, without starting the plugin.
func TestOfflineRecallStartsNoPlugin(t *testing.T) {
	home, pidFile := offlineHome(t, 0)
	h := openHost(t, home, nil)
	r := recallOf(t, h, "groceries")
	want := "model not downloaded (offline); memhost models pull FILE|URL installs all-MiniLM-L6-v2-Q4_K_M.gguf"
	if r.Mode != memhost.ModeKeyword || r.Reason != want || len(r.Results.Notebook) == 0 {
		t.Errorf("offline recall: mode %s, reason %q, %d results; want keyword results, reason %q", r.Mode, r.Reason, len(r.Results.Notebook), want)
	}
	if _, err := os.Stat(pidFile); err == nil {
		t.Error("the recall started the plugin")
	}
}

// TestDueDownloadLeftToBackground: once the failed download's backoff has
// passed, a one-shot recall still starts no plugin: it hands the download
// to the background embedder and says it is starting.
func TestDueDownloadLeftToBackground(t *testing.T) {
	home, pidFile := offlineHome(t, time.Hour)
	background := 0
	h, err := Open(context.Background(), Options{Home: home, Config: config.Default(), Background: func() error { background++; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	r := recallOf(t, h, "groceries")
	if r.Mode != memhost.ModeKeyword || r.Reason != "model download starting" || len(r.Results.Notebook) == 0 || background != 1 {
		t.Errorf("recall with a download due: mode %s, reason %q, %d results, background started %d times", r.Mode, r.Reason, len(r.Results.Notebook), background)
	}
	if _, err := os.Stat(pidFile); err == nil {
		t.Error("the recall started the plugin")
	}
}

// rewriteFailure writes f over the store's record of its model
// (modelstore/attempts.go keeps it in .NAME.failed.json).
func rewriteFailure(t *testing.T, store *modelstore.Store, f modelstore.Failure) {
	t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store.Dir, "."+f.Name+".failed.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := store.LastFailure(f.Name); !got.At.Equal(f.At) {
		t.Fatalf("the failure record was not rewritten: %+v", got)
	}
}
