package mcp

import (
	"testing"

	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/indexer"
)

// TestHostConstants: the host's names this package spells itself, so as
// not to import the host.
func TestHostConstants(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{sourceNotebook, host.SourceNotebook},
		{sourceDaily, host.SourceDaily},
		{sourceSessions, host.SourceSessions},
		{stateDeleted, indexer.StateDeleted},
	} {
		if c.got != c.want {
			t.Errorf("%q, want the host's %q", c.got, c.want)
		}
	}
}
