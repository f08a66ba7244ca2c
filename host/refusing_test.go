package host

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
)

// TestABrokenConfigRefusesEveryOperation: while config.yaml cannot be
// used, every operation of the table, run through the Host as every
// transport runs it, answers the one-line config error and writes
// nothing; fixing the file is enough.
func TestABrokenConfigRefusesEveryOperation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, seeded := retryHome(t)
	home := seeded.Home()
	seeded.Close()
	// Getenv set: the Host reads config.yaml again when it changes, as
	// every command's and the server's Host does.
	h, err := Open(ctx, Options{Home: home, Config: config.Default(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	before := notebookFiles(t, h)
	path := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(path, []byte("memory:\n  search:\n    maxResults: [oops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.RecheckConfig()
	for _, op := range api.Ops {
		req := reflect.New(reflect.TypeOf(op).Field(1).Type.In(2)).Elem().Interface() // Run func(API, context.Context, Req)
		_, err := op.Invoke(ctx, h, req)
		if fault.KindOf(err) != fault.Unavailable || fault.FieldOf(err) != "config" ||
			!strings.Contains(err.Error(), "config.yaml: yaml: line ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s with a broken config.yaml: %v, want the one-line config error", op.Info().Name, err)
		}
	}
	if got := notebookFiles(t, h); !reflect.DeepEqual(got, before) {
		t.Errorf("operations refused on a broken config.yaml changed the notebook:\n got %q\nwant %q", got, before)
	}

	if err := os.WriteFile(path, []byte("memory:\n  search:\n    maxResults: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.RecheckConfig()
	if _, err := h.Remember(ctx, memhost.RememberRequest{Text: "the config is fixed", Category: "knowledge", File: "rules"}); err != nil {
		t.Fatalf("remember once config.yaml is fixed: %v", err)
	}
}
