// Package version names the memhost build, so that a CLI and a server of
// different builds notice it instead of guessing through each other's API.
package version

import (
	"runtime/debug"
	"sync"
)

// Release is memhost's version number, changed when a release is cut.
const Release = "0.6.0-dev"

// String is Release plus the commit the binary was built from when Go
// recorded one ("0.6.0-dev+3f9c2a1b7d4e", "+dirty" for uncommitted
// changes). Test binaries and `go run` record none: Release alone.
var String = sync.OnceValue(func() string {
	v := Release
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += "+" + rev + dirty
	}
	return v
})
