package main

import (
	"strings"
	"testing"
)

// TestWarnLines: the Host's warnings print as one CLI warning line each;
// below warning level nothing prints.
func TestWarnLines(t *testing.T) {
	var b strings.Builder
	log := newWarnLines(&b).With("plugin", "hello")
	log.Info("quiet")
	log.Warn("index is corrupt; moved it aside", "aside", "brain/memory.db.corrupt-1", "err", "malformed\nsecond line")
	want := "memhost: warning: index is corrupt; moved it aside (plugin: hello, aside: brain/memory.db.corrupt-1, err: malformed second line)\n"
	if got := b.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
