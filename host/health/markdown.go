package health

import (
	"fmt"
	"strings"

	"github.com/memhost/memhost"
)

// Markdown is the report as health/latest-report.md (and HEARTBEAT.md)
// holds it: YAML frontmatter with the time and state of the run, then a
// checklist, ticked for checks that pass.
func Markdown(r memhost.HealthReport, repairs []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nlast_run: %s\nlast_status: %s\n---\n\n", r.Timestamp, r.Overall)
	fmt.Fprintf(&b, "# Memory health: %s\n\n", r.Overall)
	b.WriteString("Written by memhost's health check; replaced at each run.\n\n## Checks\n\n")
	for _, c := range r.Checks {
		tick := " "
		if c.Status == Pass {
			tick = "x"
		}
		fmt.Fprintf(&b, "- [%s] **%s** (%s): %s\n", tick, c.Name, c.Status, oneLine(c.Message))
	}
	m := r.Metrics
	b.WriteString("\n## Metrics\n\n")
	fmt.Fprintf(&b, "| metric | value |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| files | %d |\n| chunks | %d |\n| queue pending | %d |\n| queue dead | %d |\n| drift | %d |\n",
		m.Files, m.Chunks, m.QueuePending, m.QueueDead, m.Drift)
	if m.LatencyP95Ms != nil {
		fmt.Fprintf(&b, "| embedding latency p95 | %s |\n", fmtMs(*m.LatencyP95Ms))
	}
	if m.CacheHitRate != nil {
		fmt.Fprintf(&b, "| embedding cache hit rate | %.0f%% |\n", 100**m.CacheHitRate)
	}
	fmt.Fprintf(&b, "| database size | %s |\n| vault size | %s |\n", fmtBytes(m.DatabaseBytes), fmtBytes(m.VaultBytes))
	if m.LastSync != "" {
		fmt.Fprintf(&b, "| last sync | %s |\n", m.LastSync)
	}
	if m.LastWatcherEvent != "" {
		fmt.Fprintf(&b, "| last watcher event | %s |\n", m.LastWatcherEvent)
	}
	if len(repairs) > 0 {
		b.WriteString("\n## Repairs\n\n")
		for _, a := range repairs {
			fmt.Fprintf(&b, "- %s\n", oneLine(a))
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
