package semantic

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/facts"
	"github.com/memhost/memhost/host/generate"
	"github.com/memhost/memhost/host/markdown"
	"github.com/memhost/memhost/host/sessions"
	"github.com/memhost/memhost/internal/fsx"
	"github.com/memhost/memhost/knowledge"
	"github.com/memhost/memhost/registry"
	"github.com/memhost/memhost/sdk"
)

// Generator is what consolidation needs of a text model: sdk.Generator's
// Complete (a generator plugin's client, or a test's scripted one).
type Generator interface {
	Complete(ctx context.Context, req sdk.CompleteRequest) (sdk.CompleteResponse, error)
}

var _ Generator = sdk.Generator(nil)

// generatorBox holds the Generator in an atomic.Pointer.
type generatorBox struct{ g Generator }

// SetGenerator sets an in-process text model for consolidation in place
// of the configured generator plugin (a program embedding the host
// package, or a test's scripted model); nil goes back to the plugin. Each
// consolidation takes the one set when it starts.
func (s *FactService) SetGenerator(g Generator) {
	if g == nil {
		s.gen.Store(nil)
		return
	}
	s.gen.Store(&generatorBox{g})
}

// textModel returns the generator consolidation uses: the one SetGenerator
// set, else the configured plugin (generate.go), held until release.
func (s *FactService) textModel(ctx context.Context) (Generator, func(), error) {
	if b := s.gen.Load(); b != nil && b.g != nil {
		return b.g, func() {}, nil
	}
	g, release, err := s.k.Generator(ctx)
	if err != nil {
		return nil, release, err
	}
	return g, release, nil
}

// episode is one turn or daily-log entry.
type episode struct {
	key    string // in the state file
	group  string // session id or daily page path
	source string // the facts' provenance
	day    string // YYYY-MM-DD
	when   time.Time
	text   string // "user: ..." or the entry
}

// Batch limits: one generator call reads at most this many episodes, or
// this many characters of them.
const (
	batchEpisodes = 40
	batchChars    = 12000
)

// Consolidate reads the episodes (transcript messages and daily-log
// entries) not consolidated before, asks the generator for the facts and
// relations they state, in batches of one session or page, and applies
// them through fact add in the order they were said, each dated with its
// episode's day: so "Sarah moved to Acme" supersedes an earlier "Sarah
// works at TechFlow", and an old episode never supersedes a value
// confirmed after it. An answer that fails the JSON schema, or names an
// unknown episode, or holds a value a page cannot hold, is asked again
// once; a second bad answer skips the batch (reported, nothing of it
// written, tried again next run). Applied batches are recorded in
// brain/consolidated.json, so a second run asks nothing and adds nothing;
// deleting that file only makes the next run ask again (what it finds is
// then confirmed, not added twice).
func (s *FactService) Consolidate(ctx context.Context, req knowledge.ConsolidateRequest) (out knowledge.ConsolidateResponse, err error) {
	var written []string // the pages fact add wrote, in order, once each
	defer func() { out.Written = written }()
	resp := knowledge.ConsolidateResponse{Applied: []knowledge.ConsolidatedFact{}, Skipped: []knowledge.SkippedBatch{}}
	var since time.Time
	if req.Since != "" {
		if since, err = sessions.ParseWhen(req.Since, false, s.k.Location()); err != nil {
			return resp, fault.BadInputf("since", "since %q: %v", req.Since, err)
		}
	}
	if b := s.gen.Load(); (b == nil || b.g == nil) && s.k.Config().Memory.Generator.Plugin == "" {
		return resp, generate.ErrNoGenerator
	}
	unlock, err := lockConsolidation(filepath.Join(s.k.Home(), "brain", "consolidate.lock"))
	if err != nil {
		return resp, err
	}
	defer unlock()
	st, err := s.loadConsolidated()
	if err != nil {
		return resp, err
	}
	started := s.k.Now()
	// The run is recorded, with its error, for status (consolidate_run.go).
	defer func() { s.recordRun(&st, started, out, err) }()
	gen, release, err := s.textModel(ctx)
	defer release()
	if err != nil {
		return resp, err
	}
	eps, err := s.episodes()
	if err != nil {
		return resp, err
	}
	var todo []episode
	for _, e := range eps {
		if st.Episodes[e.key] != "" || (!since.IsZero() && e.when.Before(since)) {
			continue
		}
		todo = append(todo, e)
	}
	resp.Episodes = len(todo)
	for _, b := range batches(todo) {
		ans, cr, err := s.ask(ctx, gen, b)
		resp.InputTokens += cr.InputTokens
		resp.OutputTokens += cr.OutputTokens
		if cr.Model != "" {
			resp.Model = cr.Model
		}
		if err != nil {
			var bad *badAnswer
			if !errors.As(err, &bad) {
				return stopped(resp, fault.Errorf(fault.Unavailable, "generator", "consolidating %s: %w", b[0].group, err))
			}
			sk := knowledge.SkippedBatch{Group: b[0].group, Reason: bad.reason}
			for _, e := range b {
				sk.Episodes = append(sk.Episodes, e.source)
			}
			resp.Skipped = append(resp.Skipped, sk)
			s.k.Log().Warn("consolidation: a batch skipped after two bad answers", "group", sk.Group, "reason", sk.Reason)
			continue
		}
		resp.Batches++
		for _, it := range ans {
			e := b[it.episode]
			r, err := s.factAdd(ctx, knowledge.FactAddRequest{Entity: it.entity, Attribute: it.attribute, Value: it.value, Source: e.source,
				Confidence: it.confidence}, addOptions{day: e.day, onlyIfNewer: true})
			if err != nil {
				return stopped(resp, fmt.Errorf("consolidating %s: %w", e.source, err))
			}
			if !r.Stale && r.Path != "" && !slices.Contains(written, r.Path) {
				written = append(written, r.Path)
			}
			cf := knowledge.ConsolidatedFact{Entity: r.Entity, Attribute: r.Fact.Attribute, Value: r.Fact.Value, ID: r.Fact.ID, Source: e.source,
				Day: e.day, Confirmed: r.Confirmed, Stale: r.Stale}
			for _, s := range r.Superseded {
				cf.Superseded = append(cf.Superseded, s.ID)
			}
			resp.Applied = append(resp.Applied, cf)
			resp.Warnings = append(resp.Warnings, r.Warnings...)
		}
		day := s.k.Now().In(s.k.Location()).Format(facts.Date)
		for _, e := range b {
			st.Episodes[e.key] = day
		}
		if err := s.saveConsolidated(st); err != nil {
			return stopped(resp, err)
		}
	}
	return resp, nil
}

// stopped ends a run that failed: with the error when nothing was written
// yet, else with what was written and the failure as a warning (a write
// that reached the disk is never reported as failed; the batch that
// failed is not recorded, so the next run does it again).
func stopped(resp knowledge.ConsolidateResponse, err error) (knowledge.ConsolidateResponse, error) {
	if len(resp.Applied) == 0 {
		return resp, err
	}
	resp.Warnings = append(resp.Warnings, "stopped before the end ("+err.Error()+"); the next run goes on from there")
	return resp, nil
}

// batches cuts episodes into runs of one group, within the limits.
func batches(eps []episode) [][]episode {
	var out [][]episode
	var cur []episode
	chars := 0
	for _, e := range eps {
		if len(cur) > 0 && (cur[0].group != e.group || len(cur) == batchEpisodes || chars+len(e.text) > batchChars) {
			out = append(out, cur)
			cur, chars = nil, 0
		}
		cur = append(cur, e)
		chars += len(e.text)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// episodes lists every transcript message and daily-log entry, in time
// order within each session and page.
func (s *FactService) episodes() ([]episode, error) {
	var out []episode
	list, err := s.k.Sessions().List(context.Background())
	if err != nil {
		return nil, err
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Session < list[j].Session })
	today := s.k.Now().In(s.k.Location())
	for _, sum := range list {
		tr, err := s.k.Sessions().Read(sum.Session)
		if err != nil {
			return nil, err
		}
		for _, t := range tr.Turns {
			if t.Type != "message" && t.Type != "" || strings.TrimSpace(t.Content) == "" || t.ID == "" {
				continue
			}
			when, ok := sessions.TurnTime(t.Timestamp, s.k.Location())
			if !ok {
				when = today
			}
			who := t.Role
			if t.Speaker != "" {
				who = t.Speaker + " (" + t.Role + ")"
			}
			out = append(out, episode{key: sessions.Path(sum.Session) + "#" + t.ID, group: sum.Session, source: sum.Session + " turn " + t.ID,
				day: when.In(s.k.Location()).Format(facts.Date), when: when, text: who + ": " + t.Content})
		}
	}
	days, err := filepath.Glob(filepath.Join(s.k.Notebook().Root(), "daily", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(days)
	for _, abs := range days {
		name := strings.TrimSuffix(filepath.Base(abs), ".md")
		when, err := time.ParseInLocation(time.DateOnly, name, s.k.Location())
		if err != nil {
			continue // not a daily log
		}
		rel := "daily/" + filepath.Base(abs)
		if s.k.Notebook().Inside(rel) != nil {
			continue // a link out of the notebook, which is not indexed either
		}
		data, err := s.k.Notebook().Read(rel)
		if err != nil {
			return nil, err
		}
		for _, en := range dailyEntries(string(data)) {
			sum := sha256.Sum256([]byte(en.text))
			out = append(out, episode{key: rel + "#" + hex.EncodeToString(sum[:6]), group: rel,
				source: fmt.Sprintf("%s line %d", rel, en.line), day: name, when: when, text: en.text})
		}
	}
	return out, nil
}

type dailyEntry struct {
	line int
	text string
}

// dailyEntries cuts a daily log into its "## HH:MM — title" entries.
func dailyEntries(page string) []dailyEntry {
	lines := markdown.Lines(page)
	var out []dailyEntry
	start := -1
	flush := func(end int) {
		if start >= 0 {
			if text := strings.TrimSpace(strings.Join(lines[start:end], "\n")); text != "" {
				out = append(out, dailyEntry{line: start + 1, text: text})
			}
		}
	}
	for i, level := range markdown.HeadingLevels(lines) {
		if level == 1 || level == 2 {
			flush(i)
			start = -1
			if level == 2 {
				start = i
			}
		}
	}
	flush(len(lines))
	return out
}

// The answer the generator must give: facts and relations, each naming
// the episode it comes from.
type answer struct {
	Facts []struct {
		Entity     string   `json:"entity"`
		Attribute  string   `json:"attribute"`
		Value      string   `json:"value"`
		Confidence *float64 `json:"confidence,omitempty"`
		Episode    string   `json:"episode"`
	} `json:"facts"`
	Relations []struct {
		From       string   `json:"from"`
		Relation   string   `json:"relation"`
		To         string   `json:"to"`
		Confidence *float64 `json:"confidence,omitempty"`
		Episode    string   `json:"episode"`
	} `json:"relations"`
}

// AnswerSchema is the JSON schema of a consolidation answer.
var AnswerSchema = json.RawMessage(`{
  "type": "object",
  "required": ["facts", "relations"],
  "additionalProperties": false,
  "properties": {
    "facts": {
      "type": "array",
      "items": {
        "type": "object",
        "required": ["entity", "attribute", "value", "episode"],
        "additionalProperties": false,
        "properties": {
          "entity": {"type": "string", "minLength": 1, "description": "who or what the fact is about, by name: \"Sarah Chen\", \"user\", \"project:memhost\""},
          "attribute": {"type": "string", "minLength": 1, "description": "a short lower-case name for what is stated: \"email\", \"prefers\", \"role\""},
          "value": {"type": "string", "minLength": 1, "description": "the value, one line"},
          "confidence": {"type": "number", "minimum": 0, "maximum": 1},
          "episode": {"type": "string", "pattern": "^e[0-9]+$", "description": "the label of the episode that states it"}
        }
      }
    },
    "relations": {
      "type": "array",
      "items": {
        "type": "object",
        "required": ["from", "relation", "to", "episode"],
        "additionalProperties": false,
        "properties": {
          "from": {"type": "string", "minLength": 1},
          "relation": {"type": "string", "minLength": 1, "description": "\"works at\", \"uses\", \"manages\", \"depends on\""},
          "to": {"type": "string", "minLength": 1},
          "confidence": {"type": "number", "minimum": 0, "maximum": 1},
          "episode": {"type": "string", "pattern": "^e[0-9]+$"}
        }
      }
    }
  }
}`)

var answerSchema = func() *jsonschema.Resolved {
	var s jsonschema.Schema
	if err := json.Unmarshal(AnswerSchema, &s); err != nil {
		panic(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		panic(err)
	}
	return r
}()

const consolidatePrompt = `You extract durable facts from a person's conversations and notes, for their long-term memory.
Read the episodes below (each labelled e1, e2, ...) and list the facts they state about people, organisations, projects, tools, places, and the user's own preferences and circumstances.
- Only durable facts (who works where, roles, contact details, preferences, decisions, what uses what), not passing remarks, questions or plans that may not happen.
- A fact is an entity (by name), an attribute (a short lower-case name; keep using the same attribute for the same kind of fact, so a newer value replaces an older one) and a value (one line).
- A link between two entities (Sarah Chen works at Acme) is a relation: from, relation, to; do not repeat it as a fact.
- Give each fact the label of the episode that states it, in the order they were said; when a later episode changes a fact (moved, changed, no longer), list the new value with the later episode's label.
- confidence: 1 when stated plainly, lower when hedged or inferred.
Answer with JSON only, matching the schema: {"facts": [...], "relations": [...]}; empty lists when there is nothing durable.`

// item is one fact to apply, from a good answer.
type item struct {
	episode           int
	entity, attribute string
	value             string
	confidence        float64
	order             int
}

// badAnswer is an answer that failed its checks twice.
type badAnswer struct{ reason string }

func (b *badAnswer) Error() string { return b.reason }

// ask asks the generator about a batch, once more after a bad answer, and
// returns the facts to apply in the order said.
func (s *FactService) ask(ctx context.Context, gen Generator, b []episode) ([]item, sdk.CompleteResponse, error) {
	var in strings.Builder
	for i, e := range b {
		fmt.Fprintf(&in, "[e%d] %s %s\n", i+1, e.day, strings.ReplaceAll(e.text, "\n", "\n    "))
	}
	msgs := []sdk.Message{{Role: "system", Content: consolidatePrompt}, {Role: "user", Content: in.String()}}
	var total sdk.CompleteResponse
	var reason string
	for attempt := 0; attempt < 2; attempt++ {
		cr, err := gen.Complete(ctx, sdk.CompleteRequest{Messages: msgs, Schema: AnswerSchema})
		total.InputTokens += cr.InputTokens
		total.OutputTokens += cr.OutputTokens
		total.Model = cmpOr(cr.Model, total.Model)
		if err != nil && !errors.Is(err, registry.ErrBadAnswer) {
			return nil, total, err
		}
		// A generator plugin refuses an answer that is not JSON itself
		// (registry.registry.ErrBadAnswer): a bad answer like any other, asked again.
		items, why := checkAnswer(cr.Text, len(b))
		if err != nil && why == "" {
			why = err.Error()
		}
		if why == "" {
			return items, total, nil
		}
		reason = why
		msgs = append(msgs, sdk.Message{Role: "assistant", Content: cr.Text},
			sdk.Message{Role: "user", Content: "That answer is not usable: " + why + ". Answer again with JSON only, matching the schema."})
	}
	return nil, total, &badAnswer{reason: "two bad answers; the last: " + reason}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

var episodeLabel = regexp.MustCompile(`^e([0-9]+)$`)

// checkAnswer parses and checks an answer whole: "" and its items, or why
// it cannot be used (then nothing of it is).
func checkAnswer(text string, episodes int) ([]item, string) {
	text = strings.TrimSpace(text)
	// Models often fence JSON even when asked not to.
	if t, ok := strings.CutPrefix(text, "```json"); ok {
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), "```"))
	} else if t, ok := strings.CutPrefix(text, "```"); ok {
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), "```"))
	}
	var raw any
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, "not JSON (" + err.Error() + ")"
	}
	if err := answerSchema.Validate(raw); err != nil {
		return nil, "does not match the schema (" + firstLineOf(err.Error()) + ")"
	}
	var a answer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return nil, "does not match the schema (" + err.Error() + ")"
	}
	label := func(s string) (int, string) {
		m := episodeLabel.FindStringSubmatch(s)
		var n int
		if m != nil {
			fmt.Sscan(m[1], &n)
		}
		if n < 1 || n > episodes {
			return 0, fmt.Sprintf("episode %q is not one of e1..e%d", s, episodes)
		}
		return n - 1, ""
	}
	conf := func(c *float64) float64 {
		if c == nil {
			return 0
		}
		return *c
	}
	var items []item
	check := func(it item) string {
		if facts.Slug(it.entity) == "" {
			return fmt.Sprintf("entity %q has no letter or digit", it.entity)
		}
		if err := facts.CheckAttribute(it.attribute); err != nil {
			return fmt.Sprintf("attribute %q: %v", it.attribute, err)
		}
		if err := facts.CheckValue(it.value); err != nil {
			return fmt.Sprintf("value %q: %v", it.value, err)
		}
		return ""
	}
	for _, f := range a.Facts {
		ep, why := label(f.Episode)
		if why != "" {
			return nil, why
		}
		it := item{episode: ep, entity: f.Entity, attribute: f.Attribute, value: f.Value, confidence: conf(f.Confidence), order: len(items)}
		if why := check(it); why != "" {
			return nil, why
		}
		items = append(items, it)
	}
	for _, r := range a.Relations {
		ep, why := label(r.Episode)
		if why != "" {
			return nil, why
		}
		to := facts.Slug(r.To)
		if to == "" {
			return nil, fmt.Sprintf("relation target %q has no letter or digit", r.To)
		}
		it := item{episode: ep, entity: r.From, attribute: r.Relation, value: "[[" + to + "]]", confidence: conf(r.Confidence), order: len(items)}
		if why := check(it); why != "" {
			return nil, why
		}
		items = append(items, it)
	}
	// In the order said: by episode, then as listed.
	sort.SliceStable(items, func(i, j int) bool { return items[i].episode < items[j].episode })
	return items, ""
}

func firstLineOf(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// consolidated is brain/consolidated.json: the episodes consolidated, by
// key, with the day they were.
type consolidated struct {
	Version  int               `json:"version"`
	Episodes map[string]string `json:"episodes"`
	// Last is the last run that got this far (consolidate_run.go).
	Last *knowledge.ConsolidationRun `json:"last,omitempty"`
}

func (s *FactService) consolidatedPath() string {
	return filepath.Join(s.k.Home(), "brain", "consolidated.json")
}

func (s *FactService) loadConsolidated() (consolidated, error) {
	st := consolidated{Version: 1, Episodes: map[string]string{}}
	b, err := os.ReadFile(s.consolidatedPath())
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil || st.Episodes == nil {
		// Derived state: a damaged file only means asking again.
		s.k.Log().Warn("consolidation state is unreadable; every episode will be read again", "path", s.consolidatedPath(), "err", err)
		return consolidated{Version: 1, Episodes: map[string]string{}}, nil
	}
	return st, nil
}

// saveConsolidated writes the state through a flushed temporary file
// renamed into place (fsx.WriteFileAtomic): a crash leaves the old state
// or the new, never half of one.
func (s *FactService) saveConsolidated(st consolidated) error {
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	path := s.consolidatedPath()
	if err := fsx.WriteFileAtomic(path, b, 0o600); err != nil {
		return fmt.Errorf("consolidation state %s: %w", path, err)
	}
	return nil
}

// lockConsolidation takes the home's consolidation lock: one run at a
// time, across processes.
func lockConsolidation(path string) (func(), error) {
	unlock, err := fsx.TryLock(path)
	if errors.Is(err, fsx.ErrLocked) {
		return nil, fault.Errorf(fault.Conflict, "", "a consolidation of this home is already running")
	}
	return unlock, err
}
