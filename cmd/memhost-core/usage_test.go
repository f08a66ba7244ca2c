package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// leaf is a command that runs something, by its words below memhost.
type leaf struct {
	words []string
	cmd   *cli.Command
}

func leaves(root *cli.Command) []leaf {
	var out []leaf
	var walk func(prefix []string, cs []*cli.Command)
	walk = func(prefix []string, cs []*cli.Command) {
		for _, c := range cs {
			if c.Name == "help" {
				continue
			}
			words := append(slices.Clone(prefix), c.Name)
			out = append(out, leaf{words, c})
			walk(words, c.Commands)
		}
	}
	walk(nil, root.Commands)
	return out
}

// TestEveryCommandHasExamples: each command's help ends with examples, and
// every flag an example uses is one the command has.
func TestEveryCommandHasExamples(t *testing.T) {
	root := newApp(cmdapp.Stdio{}, false)
	for _, l := range leaves(root) {
		name := strings.Join(l.words, " ")
		_, ex, found := strings.Cut(l.cmd.Description, "Examples:")
		if !found {
			t.Errorf("memhost %s: no examples in its help", name)
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(ex), "\n") {
			line = strings.TrimSpace(line)
			if !strings.Contains(line, "memhost "+name) {
				t.Errorf("memhost %s: example %q does not run it", name, line)
			}
			for _, w := range strings.Fields(line) {
				flag, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
				if !strings.HasPrefix(w, "--") || w == "--" || hasFlag(root, l.cmd, flag) {
					continue
				}
				t.Errorf("memhost %s: example %q uses --%s, which it does not have", name, line, flag)
			}
		}
		r := memhost(t, t.TempDir(), nil, append(l.words, "--help")...)
		doubled := slices.ContainsFunc(strings.Split(r.stdout, "\n"), func(s string) bool {
			return strings.Contains(s, "(default ") && strings.Contains(s, "(default: ")
		})
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") || doubled {
			t.Errorf("memhost %s --help: exit %d, or no examples, or a default shown twice:\n%s", name, r.code, r.stdout)
		}
	}
}

func hasFlag(root, c *cli.Command, name string) bool {
	for _, fl := range append(slices.Clone(c.Flags), root.Flags...) {
		if slices.Contains(fl.Names(), name) {
			return true
		}
	}
	return false
}

// TestUsageErrorsExitTwo: every command called wrongly (an unknown flag,
// arguments it does not take, none where it needs some, a flag value out
// of its range) exits 2 with one line on stderr and changes nothing.
func TestUsageErrorsExitTwo(t *testing.T) {
	home := t.TempDir()
	ok(t, home, "remember", "Sarah Chen - Phone: 555-1234")
	type call struct {
		args []string
		want string
	}
	var calls []call
	for _, l := range leaves(newApp(cmdapp.Stdio{}, false)) {
		if l.cmd.Action == nil {
			continue
		}
		calls = append(calls, call{append(slices.Clone(l.words), "--no-such-flag"), "no-such-flag"})
		switch args := strings.TrimSpace(l.cmd.ArgsUsage); {
		case args == "":
			calls = append(calls, call{append(slices.Clone(l.words), "surplus"), ""})
		case !strings.HasPrefix(args, "["):
			calls = append(calls, call{slices.Clone(l.words), ""})
		}
	}
	calls = append(calls,
		call{[]string{"recall", "x", "--sources", "web"}, `unknown source "web"`},
		call{[]string{"recall", "x", "--max-results", "0"}, "--max-results must be at least 1"},
		call{[]string{"recall", "x", "--max-results", "many"}, "many"},
		call{[]string{"remember", "--category", "diary", "x"}, `unknown category "diary"`},
		call{[]string{"session", "append", "--session", "s1", "--role", "robot", "hi"}, "robot"},
		call{[]string{"session", "append", "--session", "s1", "--role", "user", "--meta", "[1]", "hi"}, "meta"},
		call{[]string{"session", "append", "--session", "../s1", "--role", "user", "hi"}, "../s1"},
		call{[]string{"session", "ingest", "--format", "word", "x.jsonl"}, "word"},
		call{[]string{"session", "check", "s1", "--incoming-tokens", "-5"}, "incoming-tokens"},
		call{[]string{"conversation-search", "x", "--since", "last tuesday"}, "last tuesday"},
		call{[]string{"conversation-search", "x", "--max-results", "0"}, "max-results"},
		call{[]string{"eval", "--k", "five", "dir"}, "five"},
		call{[]string{"plugins", "use", "hello", "--set", "novalue"}, "novalue"},
		call{[]string{"get", "reference/contacts.md", "--lines", "-1"}, "must be positive"},
	)
	before := snapshot(t, home)
	for _, c := range calls {
		r := memhost(t, home, nil, c.args...)
		want := 2
		if slices.Equal(c.args, []string{"hook"}) {
			want = 1 // a hook's errors exit 1: Claude Code takes 2 as "block the agent"
		}
		if r.code != want || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("memhost %s: exit %d, stderr %q; want exit %d and one line with %q", strings.Join(c.args, " "), r.code, r.stderr, want, c.want)
		}
	}
	if after := snapshot(t, home); !reflect.DeepEqual(before, after) {
		t.Error("a usage error changed the home")
	}
}
