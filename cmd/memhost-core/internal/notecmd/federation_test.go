package notecmd

import (
	"testing"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// TestLocalRemote: a relative local path is taken from the caller's
// folder; URLs, scp-like addresses and absolute paths are left alone.
func TestLocalRemote(t *testing.T) {
	a := cmds{&cmdapp.App{IO: cmdapp.Stdio{Cwd: "/work/me"}}}
	for in, want := range map[string]string{
		"":                                  "",
		"memory.git":                        "/work/me/memory.git",
		"../shared/memory.git":              "/work/shared/memory.git",
		"/srv/git/memory.git":               "/srv/git/memory.git",
		"git@github.com:ada/memory.git":     "git@github.com:ada/memory.git",
		"server:memory.git":                 "server:memory.git",
		"https://github.com/ada/memory.git": "https://github.com/ada/memory.git",
		"file:///srv/git/memory.git":        "file:///srv/git/memory.git",
		"./a:b/memory.git":                  "/work/me/a:b/memory.git",
	} {
		if got := a.localRemote(in); got != want {
			t.Errorf("localRemote(%q) = %q, want %q", in, got, want)
		}
	}
}
