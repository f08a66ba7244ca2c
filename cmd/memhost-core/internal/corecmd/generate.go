package corecmd

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	mh "github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
)

// routedBy tells who chose the page of an automatic remember.
func routedBy(resp mh.RememberResponse) string {
	switch resp.Routing {
	case host.RoutedByGenerator:
		s := " (chosen by the generator"
		if len(resp.Tags) > 0 {
			s += "; tags added: " + strings.Join(resp.Tags, ", ")
		}
		return s + ")"
	case host.RoutedByRules:
		return " (chosen by the rules)"
	}
	return ""
}

// printGenerators lists the generator plugins after the embeddings ones,
// when any are installed.
func printGenerators(w io.Writer, gens []mh.PluginInfo) {
	if len(gens) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GENERATOR\tVERSION\tMODEL\tSTATUS\tSHA256\tPATH")
	for _, p := range gens {
		name, status := p.Name, p.Status
		if p.Active {
			name += " *"
		}
		if p.Message != "" {
			status += ": " + p.Message
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", name, p.Version, p.Model, status, p.SHA256[:12], p.Path)
	}
	tw.Flush()
}

// generatorLine is the plugins status line of the generator.
func generatorLine(g mh.ProviderStatus) string {
	if g.Plugin == "" {
		return "none: " + strings.TrimPrefix(g.Message, "no generator configured: ")
	}
	s := g.Plugin
	if g.Model != "" {
		s += " (" + g.Model + ")"
	}
	s += ", " + g.State
	if g.Message != "" {
		s += ": " + g.Message
	}
	if g.PingError != "" {
		s += "; ping failed: " + g.PingError
	}
	return s
}
