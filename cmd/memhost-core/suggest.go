package main

import (
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// unknownCommand is the usage error of a command line whose word name is
// no command of cmd. It offers the nearest command when the word is a
// typo of one (urfave/cli's own suggestion always names some command,
// however far, so it is not used).
func unknownCommand(cmd *cli.Command, name string) error {
	prefix := ""
	if cmd.Root() != cmd {
		prefix = strings.TrimPrefix(cmd.FullName(), cmd.Root().Name+" ") + " "
	}
	if s := nearestCommand(cmd.Commands, name); s != "" {
		return cmdapp.Usagef("unknown command %q — did you mean %q?", prefix+name, prefix+s)
	}
	help := "memhost help"
	if prefix != "" {
		help = "memhost " + prefix + "--help"
	}
	return cmdapp.Usagef("unknown command %q (run %s for the list)", prefix+name, help)
}

// nearestCommand is the visible command name (or alias) closest to name
// by edit distance, when close enough to be a typo: one edit, or two in a
// word of five letters or more. "" when none is.
func nearestCommand(cmds []*cli.Command, name string) string {
	best, bestD := "", 3
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, n := range c.Names() {
			if d := editDistance(strings.ToLower(name), n); d < bestD {
				best, bestD = n, d
			}
		}
	}
	if bestD > 2 || bestD == 2 && len([]rune(name)) < 5 {
		return ""
	}
	return best
}

// editDistance counts the insertions, deletions, substitutions and
// swaps of neighbours that turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
