package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// recallScore is how many of the questions asked were answered.
type recallScore struct{ Asked, Found int }

func (r recallScore) String() string {
	if r.Asked == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%% (%d/%d)", 100*float64(r.Found)/float64(r.Asked), r.Found, r.Asked)
}

// count counts a search, found when it was answered hybrid.
func (r *recallScore) count(mode string) {
	r.Asked++
	if mode == "hybrid" {
		r.Found++
	}
}

func (r recallScore) value() float64 {
	if r.Asked == 0 {
		return math.NaN()
	}
	return 100 * float64(r.Found) / float64(r.Asked)
}

// monthRow is one simulated month's figures.
type monthRow struct {
	Month                          string
	Calls                          map[string][]time.Duration
	Retries                        map[string]int
	Kills, RefusedFull             int
	Conversations, Facts, Notebook recallScore
	// Hybrid counts the searches of the recall probes (Asked) and those
	// answered with vectors (Found).
	Hybrid recallScore
	// Pending and Embedded are the chunks without and with a vector at
	// the month's end; Night the time the embedder was given after each
	// day (sim.night).
	Pending, Embedded                        int
	Night                                    time.Duration
	IndexBytes, NotebookBytes, SessionsBytes int64
	PeakRSSKB                                int
	Health                                   string
	Alerts                                   []string
}

type stats struct {
	month  *monthRow
	months []*monthRow
	start  time.Time
}

func newStats() *stats { return &stats{month: newMonth(), start: time.Now()} }

func newMonth() *monthRow {
	return &monthRow{Calls: map[string][]time.Duration{}, Retries: map[string]int{}}
}

func (s *stats) add(op string, d time.Duration) { s.month.Calls[op] = append(s.month.Calls[op], d) }
func (s *stats) retry(op string)                { s.month.Retries[op]++ }

func (s *stats) closeMonth(row *monthRow) {
	s.months = append(s.months, row)
	s.month = newMonth()
}

// pct is the p-th percentile (0..100) of ds, in milliseconds; NaN for none.
func pct(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	x := append([]time.Duration{}, ds...)
	sort.Slice(x, func(i, j int) bool { return x[i] < x[j] })
	i := int(math.Ceil(p/100*float64(len(x)))) - 1
	if i < 0 {
		i = 0
	}
	return float64(x[i]) / float64(time.Millisecond)
}

func (r *monthRow) summary() string {
	return fmt.Sprintf("prompt hook p50 %.0f ms, stop hook p50 %.0f ms, conversations %s, facts %s, notebook %s, hybrid %s, %d chunks waiting, night %.0f s, index %.1f MB, health %s",
		pct(r.Calls["hook UserPromptSubmit"], 50), pct(r.Calls["hook Stop"], 50), r.Conversations, r.Facts, r.Notebook, r.Hybrid, r.Pending, r.Night.Seconds(), mb(r.IndexBytes), r.Health)
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// timed are the operations the report shows, as an agent calls them.
var timed = []struct{ op, label string }{
	{"hook SessionStart", "session-start hook"},
	{"hook UserPromptSubmit", "prompt hook"},
	{"hook Stop", "stop hook"},
	{"hook PreCompact", "pre-compact hook"},
	{"hook SessionEnd", "session-end hook"},
	{"recall", "recall"},
	{"context", "context --query"},
	{"conversation-search", "conversation-search"},
	{"daily-log", "daily-log"},
	{"sync", "sync --remote"},
}

func ms(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// writeReport writes report.md and the charts beside it.
func (s *sim) writeReport(findings []string) error {
	var b strings.Builder
	provider := "the hello plugin (hash vectors)"
	if s.opt.Model != "" {
		provider = "the local provider with " + filepath.Base(s.opt.Model)
	}
	fmt.Fprintf(&b, "# memhost-sim: %d simulated days from %s\n\n", s.opt.Days, s.opt.Start.Format("2006-01-02"))
	fmt.Fprintf(&b, "Random seed: %d; embeddings by %s; %d CPUs (%s); wall time %s.\n\n", s.opt.Seed, provider, runtime.NumCPU(), cpuModel(), time.Since(s.stats.start).Round(time.Second))
	kinds := map[string]int{}
	for _, w := range s.ledger.writes {
		kinds[w.Kind]++
	}
	kills, retries, full := 0, 0, 0
	for _, m := range s.stats.months {
		kills += m.Kills
		full += m.RefusedFull
		for _, n := range m.Retries {
			retries += n
		}
	}
	fmt.Fprintf(&b, "## Audit\n\n")
	fmt.Fprintf(&b, "Checked in both homes: %d transcript turns through the hooks, %d turns on the second machine, %d daily-log entries, %d remembered items, %d edits by the person (%d pages renamed); %d current facts. ",
		kinds["turn"], kinds["turn-b"], kinds["daily"], kinds["remember"], kinds["edit"], s.ledger.renames, countFacts(s.facts))
	fmt.Fprintf(&b, "Along the way: memhost serve killed %d times, %d commands run again after a failure, %d refused while the disk was full.\n\n", kills, retries, full)
	if len(findings) == 0 {
		b.WriteString("**Nothing lost, doubled, torn or leaked**: every acknowledged write is in the files exactly once, the index agrees with the files, the two machines hold the same shared memory, and the remote holds only the shared folders.\n\n")
	} else {
		fmt.Fprintf(&b, "**%d problems:**\n\n", len(findings))
		for _, f := range findings {
			fmt.Fprintf(&b, "- %s\n", f)
		}
		b.WriteString("\n")
	}

	b.WriteString("## Latency by month (ms, p50 / p95, each call a process as an agent runs it)\n\n| month |")
	for _, t := range timed {
		fmt.Fprintf(&b, " %s |", t.label)
	}
	b.WriteString("\n| --- |" + strings.Repeat(" --- |", len(timed)) + "\n")
	for _, m := range s.stats.months {
		fmt.Fprintf(&b, "| %s |", m.Month)
		for _, t := range timed {
			fmt.Fprintf(&b, " %s / %s |", ms(pct(m.Calls[t.op], 50)), ms(pct(m.Calls[t.op], 95)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Recall, size and health by month\n\n")
	b.WriteString("Conversations: LongMemEval questions asked once their sessions were replayed, an answer session among the first five of `conversation-search` over the whole home. Facts: the memory context for a question about each fact told quotes its latest value. Notebook: ten earlier writes searched by their words, found in `recall`'s top five. Hybrid: of the conversation-search probes (each at the end of its day, before the night) and the notebook probes (after the month's rollup and prune), those answered with vectors, not keyword-only; the facts' memory-context probes are not counted. Vectors: chunks with one / waiting for one after the month-end rollup, prune and probes. Night: each day ends with the server left to embed the day's backlog (at most two minutes), the month's total.\n\n")
	b.WriteString("| month | calls | conversations R@5 | facts | notebook | hybrid | vectors | night s | index MB | notebook MB | sessions MB | server peak RSS MB | health | alerts |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, m := range s.stats.months {
		n := 0
		for _, c := range m.Calls {
			n += len(c)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %d / %d | %.0f | %.1f | %.1f | %.1f | %.0f | %s | %s |\n", m.Month, n, m.Conversations, m.Facts, m.Notebook,
			m.Hybrid, m.Embedded, m.Pending, m.Night.Seconds(), mb(m.IndexBytes), mb(m.NotebookBytes), mb(m.SessionsBytes), float64(m.PeakRSSKB)/1024, m.Health, strings.Join(m.Alerts, "; "))
	}
	b.WriteString("\n![latency](latency.svg) ![recall](recall.svg) ![size](size.svg)\n\n## Events\n\n")
	for _, e := range s.events {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	if err := os.WriteFile(filepath.Join(s.out, "report.md"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return s.writeCharts()
}

func countFacts(f *factBook) int {
	n := 0
	for _, a := range f.latest {
		n += len(a)
	}
	return n
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func (s *sim) writeCharts() error {
	var months []string
	for _, m := range s.stats.months {
		months = append(months, m.Month)
	}
	series := func(f func(*monthRow) float64) []float64 {
		var out []float64
		for _, m := range s.stats.months {
			out = append(out, f(m))
		}
		return out
	}
	charts := []struct {
		file, title, unit string
		lines             []line
	}{
		{"latency.svg", "p50 latency by month", "ms", []line{
			{"prompt hook", series(func(m *monthRow) float64 { return pct(m.Calls["hook UserPromptSubmit"], 50) })},
			{"stop hook", series(func(m *monthRow) float64 { return pct(m.Calls["hook Stop"], 50) })},
			{"session-start hook", series(func(m *monthRow) float64 { return pct(m.Calls["hook SessionStart"], 50) })},
			{"recall", series(func(m *monthRow) float64 { return pct(m.Calls["recall"], 50) })},
			{"sync --remote", series(func(m *monthRow) float64 { return pct(m.Calls["sync"], 50) })},
		}},
		{"recall.svg", "recall by month", "%", []line{
			{"conversations R@5", series(func(m *monthRow) float64 { return m.Conversations.value() })},
			{"facts", series(func(m *monthRow) float64 { return m.Facts.value() })},
			{"notebook", series(func(m *monthRow) float64 { return m.Notebook.value() })},
		}},
		{"size.svg", "size by month", "MB", []line{
			{"index (brain/)", series(func(m *monthRow) float64 { return mb(m.IndexBytes) })},
			{"notebook", series(func(m *monthRow) float64 { return mb(m.NotebookBytes) })},
			{"sessions", series(func(m *monthRow) float64 { return mb(m.SessionsBytes) })},
			{"server peak RSS", series(func(m *monthRow) float64 { return float64(m.PeakRSSKB) / 1024 })},
		}},
	}
	for _, c := range charts {
		if err := os.WriteFile(filepath.Join(s.out, c.file), []byte(svgChart(c.title, c.unit, months, c.lines)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

type line struct {
	name   string
	values []float64 // NaN: no value that month
}

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}

// svgChart draws lines against the months: a plain SVG a browser or an
// editor's preview shows at a glance.
func svgChart(title, unit string, xs []string, lines []line) string {
	const w, h, left, right, top, bottom = 640, 320, 56, 170, 36, 40
	max := 0.0
	for _, l := range lines {
		for _, v := range l.values {
			if !math.IsNaN(v) && v > max {
				max = v
			}
		}
	}
	if max == 0 {
		max = 1
	}
	max = niceCeil(max)
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	x := func(i int) float64 {
		if len(xs) < 2 {
			return left + pw/2
		}
		return left + pw*float64(i)/float64(len(xs)-1)
	}
	y := func(v float64) float64 { return top + ph*(1-v/max) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/><text x="%d" y="20" font-size="14">%s (%s)</text>`+"\n", w, h, left, title, unit)
	for i := 0; i <= 4; i++ {
		v := max * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left, left+pw, y(v), y(v), left-6, y(v)+4, trimFloat(v))
	}
	for i, m := range xs {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(i), h-bottom+16, m)
	}
	for li, l := range lines {
		c := palette[li%len(palette)]
		var pts []string
		for i, v := range l.values {
			if math.IsNaN(v) {
				continue
			}
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`+"\n", x(i), y(v), c)
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", c, strings.Join(pts, " "))
		}
		ly := top + 14*li
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="3" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", w-right+12, ly+4, c, w-right+28, ly+8, l.name)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}
