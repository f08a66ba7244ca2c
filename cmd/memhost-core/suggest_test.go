package main

import (
	"testing"

	"github.com/urfave/cli/v3"
)

func TestNearestCommand(t *testing.T) {
	cmds := []*cli.Command{{Name: "recall"}, {Name: "remember"}, {Name: "rm"}, {Name: "mv"}, {Name: "session"}, {Name: "secret", Hidden: true}}
	for _, tt := range []struct{ name, want string }{
		{"recal", "recall"},
		{"RECALL", "recall"},
		{"reacll", "recall"},
		{"remembr", "remember"},
		{"sesion", "session"},
		{"rn", "rm"},
		{"secrte", ""}, // hidden
		{"xy", ""},
		{"frobnicate", ""},
		{"remind", ""},
		{"vr", ""}, // two edits (rm, mv) in a short word are no typo
	} {
		if got := nearestCommand(cmds, tt.name); got != tt.want {
			t.Errorf("nearestCommand(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}
