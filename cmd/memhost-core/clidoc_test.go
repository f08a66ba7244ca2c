package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
)

// cliDocPath is the command reference that TestCLIDoc keeps in step with
// the command tree.
const cliDocPath = "../../docs/cli.md"

// TestCLIDoc renders the command tree (every command and subcommand, its
// usage line, its flags with their defaults, its examples) as markdown and
// compares it with docs/cli.md, so that the reference cannot go stale.
// After a change to a command, rewrite it and review the diff:
//
//	go test -tags sqlite_fts5 -run '^TestCLIDoc$' ./cmd/memhost-core/ -update
func TestCLIDoc(t *testing.T) {
	got := renderCLIDoc(newApp(cmdapp.Stdio{}, false))
	if *update {
		if err := os.WriteFile(cliDocPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("docs/cli.md is stale (run go test -tags sqlite_fts5 -run '^TestCLIDoc$' ./cmd/memhost-core/ -update):\n%s", lineDiff(string(want), got))
	}
}

// renderCLIDoc is docs/cli.md for the tree below root.
func renderCLIDoc(root *cli.Command) string {
	var b strings.Builder
	b.WriteString("# memhost command reference\n\n")
	b.WriteString("<!-- Generated from the command tree by TestCLIDoc (cmd/memhost-core/clidoc_test.go): edit the commands, then\n" +
		"     go test -tags sqlite_fts5 -run '^TestCLIDoc$' ./cmd/memhost-core/ -update -->\n\n")
	fmt.Fprintf(&b, "%s. %s\n\n", capitalise(root.Usage), oneLine(root.Description))
	b.WriteString("Every command's `--help` prints the same. Errors are one line on stderr; the exit status is 1 when the command failed and 2 when it was called wrongly.\n\n")
	b.WriteString("## Global options\n\nThey go anywhere on the line.\n\n")
	writeFlags(&b, root.Flags)
	b.WriteString("## Commands\n\n")
	all := docCommands(root)
	for _, c := range all {
		fmt.Fprintf(&b, "- [`%s`](#%s): %s\n", c.name, anchor(c.name), c.cmd.Usage)
	}
	b.WriteString("\n")
	for _, c := range all {
		writeCommand(&b, c)
	}
	return b.String()
}

type docCommand struct {
	name string // "memhost session append"
	cmd  *cli.Command
}

// docCommands lists the visible commands below root, each before its
// subcommands, in the order of the help.
func docCommands(root *cli.Command) []docCommand {
	var out []docCommand
	var walk func(prefix string, cs []*cli.Command)
	walk = func(prefix string, cs []*cli.Command) {
		for _, c := range cs {
			if c.Hidden || c.Name == "help" {
				continue
			}
			name := prefix + " " + c.Name
			out = append(out, docCommand{name, c})
			walk(name, c.Commands)
		}
	}
	walk(root.Name, root.Commands)
	return out
}

func writeCommand(b *strings.Builder, c docCommand) {
	fmt.Fprintf(b, "## %s\n\n%s.\n\n", c.name, capitalise(c.cmd.Usage))
	if len(c.cmd.Aliases) > 0 {
		fmt.Fprintf(b, "Also: %s.\n\n", strings.Join(c.cmd.Aliases, ", "))
	}
	flags := visibleFlags(c.cmd.Flags)
	usage := c.name
	if hasSubcommands(c.cmd) {
		usage += " COMMAND"
	}
	if len(flags) > 0 {
		usage += " [options]"
	}
	if args := strings.TrimSpace(c.cmd.ArgsUsage); args != "" {
		usage += " " + args
	}
	fmt.Fprintf(b, "```\n%s\n```\n\n", usage)
	text, examples, _ := strings.Cut(c.cmd.Description, "Examples:")
	if text = strings.TrimSpace(text); text != "" {
		fmt.Fprintf(b, "%s\n\n", text)
	}
	if hasSubcommands(c.cmd) {
		b.WriteString("Commands: ")
		var subs []string
		for _, s := range c.cmd.Commands {
			if !s.Hidden && s.Name != "help" {
				subs = append(subs, fmt.Sprintf("[`%s`](#%s)", s.Name, anchor(c.name+" "+s.Name)))
			}
		}
		b.WriteString(strings.Join(subs, ", ") + ".\n\n")
	}
	if len(flags) > 0 {
		writeFlags(b, flags)
	}
	if examples = strings.TrimSpace(examples); examples != "" {
		var lines []string
		for _, l := range strings.Split(examples, "\n") {
			lines = append(lines, strings.TrimSpace(l))
		}
		fmt.Fprintf(b, "Examples:\n\n```sh\n%s\n```\n\n", strings.Join(lines, "\n"))
	}
}

// writeFlags writes a table of flags: names with their value's
// placeholder, the default as the help shows it, the usage.
func writeFlags(b *strings.Builder, flags []cli.Flag) {
	b.WriteString("| option | default | |\n| --- | --- | --- |\n")
	for _, f := range visibleFlags(flags) {
		df, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		placeholder, usage := docPlaceholder(df.GetUsage())
		if df.TakesValue() && placeholder == "" {
			placeholder = df.TypeName()
		}
		var names []string
		for _, n := range f.Names() {
			dash := "--"
			if len(n) == 1 {
				dash = "-"
			}
			names = append(names, dash+n)
		}
		name := strings.Join(names, ", ")
		if df.TakesValue() {
			name += " " + placeholder
		}
		if m, ok := f.(cli.DocGenerationMultiValueFlag); ok && m.IsMultiValueFlag() {
			name += " (repeatable)"
		}
		def := ""
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			def = "required"
		} else if df.IsDefaultVisible() {
			if s := df.GetDefaultText(); s != "" {
				def = s
			} else if df.TakesValue() {
				def = df.GetValue()
			}
		}
		switch {
		case def == "" || def == `""`:
			// most usages say their default in words: "(default memory.search.maxResults, 15)"
			def, usage = usageDefault(usage)
		default:
			def = "`" + def + "`"
		}
		if env := df.GetEnvVars(); len(env) > 0 {
			usage += " (also $" + strings.Join(env, ", $") + ")"
		}
		fmt.Fprintf(b, "| `%s` | %s | %s |\n", name, def, cell(usage))
	}
	b.WriteString("\n")
}

// usageDefault takes a closing "(default ...)" out of a flag's usage.
func usageDefault(usage string) (def, rest string) {
	i := strings.LastIndex(usage, "(default ")
	if i < 0 || !strings.HasSuffix(usage, ")") {
		return "", usage
	}
	inner := usage[i+len("(default ") : len(usage)-1]
	if strings.Count(inner, "(") != strings.Count(inner, ")") {
		return "", usage
	}
	return inner, strings.TrimSpace(usage[:i])
}

func visibleFlags(flags []cli.Flag) []cli.Flag {
	var out []cli.Flag
	for _, f := range flags {
		if v, ok := f.(cli.VisibleFlag); ok && !v.IsVisible() {
			continue
		}
		if slices.Contains(f.Names(), "help") {
			continue
		}
		out = append(out, f)
	}
	return out
}

func hasSubcommands(c *cli.Command) bool {
	return slices.ContainsFunc(c.Commands, func(s *cli.Command) bool { return !s.Hidden && s.Name != "help" })
}

// docPlaceholder takes a `placeholder` out of a flag's usage, as the help
// does.
func docPlaceholder(usage string) (placeholder, rest string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	placeholder = usage[i+1 : i+1+j]
	return placeholder, usage[:i] + placeholder + usage[i+1+j+1:]
}

// anchor is the id GitHub gives the heading "## NAME".
func anchor(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
