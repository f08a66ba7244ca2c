package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The words the simulation's own writes are made of.
var (
	topics    = []string{"the roadmap", "the garden", "the budget", "the trip to Lisbon", "the kitchen renovation", "the book club", "the quarterly report", "the new bike", "the piano lessons", "the move"}
	people    = []string{"Dana Reyes", "Omar Haddad", "Lena Park", "Tomas Weber", "Priya Natarajan"}
	companies = []string{"Acme Corp", "Globex", "Initech", "Umbrella Labs", "Hooli", "Stark Industries", "Wayne Enterprises", "Soylent Foods"}
	cities    = []string{"Lisbon", "Porto", "Berlin", "Austin", "Osaka", "Toronto", "Nairobi", "Melbourne"}
	likes     = []string{"oolong tea", "window seats", "morning meetings", "paper notebooks", "dark roast coffee", "quiet trains", "jazz on Sundays", "walking meetings"}
	tasks     = []struct {
		Prompt string
		Tools  []string
	}{
		{"the build is red in the parser package", []string{"Read", "Edit", "Bash"}},
		{"the tests fail after the last merge", []string{"Bash", "Read", "Edit", "Bash"}},
		{"find what changed in the release notes", []string{"WebSearch", "WebFetch"}},
	}
)

// cc is one line of a Claude Code transcript, as the runtime writes it.
type cc struct {
	ParentUUID *string `json:"parentUuid"`
	SessionID  string  `json:"sessionId"`
	Type       string  `json:"type"`
	Message    struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"message"`
	UUID      string `json:"uuid"`
	Timestamp string `json:"timestamp"`
}

// hookCommand is memhost's name for each Claude Code hook event
// (examples/claude-code/settings.json).
var hookCommand = map[string]string{
	"SessionStart": "session-start", "UserPromptSubmit": "prompt", "PreCompact": "pre-compact",
	"SessionEnd": "session-end", "Stop": "stop",
}

// agentRuntime is an agent runtime's side of one session: the transcript file
// it appends to and the hook input it gives memhost.
type agentRuntime struct {
	s      *sim
	id     string // Claude Code's session id: the transcript's name
	path   string
	parent string
	n      int     // lines written
	tokens int     // estimated tokens since the session started or compacted
	turns  []write // lines no hook has stored yet
	acked  []write // lines a stop, pre-compact or session-end hook stored
}

func (rt *agentRuntime) hook(event string, extra map[string]string) callResult {
	in := map[string]string{"session_id": rt.id, "transcript_path": rt.path, "cwd": rt.s.out, "hook_event_name": event}
	for k, v := range extra {
		in[k] = v
	}
	r := rt.s.a.call("hook "+event, mustJSON(in), "hook", hookCommand[event])
	if rt.s.ack(r) && event != "SessionStart" && event != "UserPromptSubmit" {
		// The hooks that store the transcript acknowledge every line so far.
		rt.acked = append(rt.acked, rt.turns...)
		rt.turns = nil
	}
	return r
}

// line appends one transcript line: the runtime's own write, before memhost
// sees it (a stop hook then stores it).
func (rt *agentRuntime) line(typ, role string, content any, text string) {
	rt.n++
	id := fmt.Sprintf("%s-%03d", rt.id, rt.n)
	l := cc{SessionID: rt.id, Type: typ, UUID: id, Timestamp: rt.s.clock().UTC().Format(time.RFC3339Nano)}
	if rt.parent != "" {
		p := rt.parent
		l.ParentUUID = &p
	}
	l.Message.Role, l.Message.Content = role, content
	rt.parent = id
	f, err := os.OpenFile(rt.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		rt.s.fatal(err)
	}
	if _, err := f.WriteString(mustJSON(l) + "\n"); err != nil {
		rt.s.fatal(err)
	}
	if err := f.Close(); err != nil {
		rt.s.fatal(err)
	}
	rt.tokens += len(text) / 4
	if strings.TrimSpace(text) != "" { // an empty message is not a turn
		rt.turns = append(rt.turns, write{Kind: "turn", Machine: "a", Day: rt.s.day, Text: text, Session: "claude-" + rt.id, Turn: id})
	}
}

// session replays the next conversation of the corpus through the hooks
// as Claude Code calls them; some sessions open with a coding task whose
// tool calls teach a skill. kill: the server is killed during one of its
// hooks; killPlugin: the embeddings plugin is killed before it.
func (s *sim) session(k int, kill, killPlugin bool) {
	if s.next >= len(s.corpus.Convs) {
		return
	}
	cv := s.corpus.Convs[s.next]
	s.next++
	s.sessions++
	rt := &agentRuntime{s: s, id: fmt.Sprintf("%s-%04d", s.now.Format("20060102"), s.sessions)}
	rt.path = filepath.Join(s.out, "transcripts", rt.id+".jsonl")
	s.convOf["claude-"+rt.id] = cv.ID
	turns := cv.Turns
	if s.opt.MaxTurns > 0 && len(turns) > s.opt.MaxTurns {
		turns = turns[:s.opt.MaxTurns]
	}
	killTurn := -1
	if kill {
		killTurn = s.rng.Intn(len(turns) + 1)
	}
	rt.hook("SessionStart", map[string]string{"source": "startup"})
	if s.rng.Float64() < 0.15 {
		t := tasks[s.rng.Intn(len(tasks))]
		rt.hook("UserPromptSubmit", map[string]string{"prompt": t.Prompt})
		rt.line("user", "user", t.Prompt, t.Prompt)
		for i, tool := range t.Tools {
			use := fmt.Sprintf("toolu_%s_%d", rt.id, i)
			rt.line("assistant", "assistant", []map[string]any{{"type": "tool_use", "id": use, "name": tool, "input": map[string]string{"step": fmt.Sprint(i)}}}, "")
			rt.line("user", "user", []map[string]any{{"type": "tool_result", "tool_use_id": use, "content": "ok"}}, "")
		}
		rt.line("assistant", "assistant", []map[string]any{{"type": "text", "text": "Done: " + t.Prompt}}, "Done: "+t.Prompt)
		rt.hook("Stop", nil)
	}
	for i, t := range turns {
		if killPlugin && i == len(turns)/2 { // the prompt hooks have started it by now
			if s.a.killPlugin() {
				s.event("embeddings plugin killed (SIGKILL)")
			} else {
				s.event("no embeddings plugin process to kill")
			}
		}
		if i == killTurn {
			s.killDuring(func() { rt.stopOrPrompt(t, turns, i) })
			continue
		}
		rt.stopOrPrompt(t, turns, i)
	}
	rt.hook("Stop", nil)
	rt.hook("SessionEnd", map[string]string{"reason": "exit"})
	s.lastPhrase = phrase(turns)
	if s.lastPhrase != "" && s.rng.Intn(2) == 0 { // the agent looks something up, as through MCP
		s.a.call("recall", "", "recall", s.lastPhrase)
	}
	for _, w := range rt.acked {
		s.ledger.add(w)
	}
	for _, w := range rt.turns { // no hook stored them (the disk was full)
		s.ledger.unacked = append(s.ledger.unacked, w)
	}
	s.a.ensureServer()
}

// stopOrPrompt plays turn i: a user turn is the prompt hook, then the
// line; an assistant turn is its line, then the stop hook once the next
// turn is the user's. Past the compaction threshold the runtime flushes
// (pre-compact) and starts again (session-start, source compact).
func (rt *agentRuntime) stopOrPrompt(t turn, turns []turn, i int) {
	if t.Role == "user" {
		rt.hook("UserPromptSubmit", map[string]string{"prompt": t.Content})
		rt.line("user", "user", t.Content, t.Content)
		return
	}
	rt.line("assistant", "assistant", []map[string]any{{"type": "text", "text": t.Content}}, t.Content)
	if i+1 < len(turns) && turns[i+1].Role == "user" {
		rt.hook("Stop", nil)
	}
	if rt.tokens > 4000 { // about 16k characters: some sessions pass it
		rt.hook("PreCompact", map[string]string{"trigger": "auto"})
		rt.hook("SessionStart", map[string]string{"source": "compact"})
		rt.tokens = 0
	}
}

// killDuring kills the server a few milliseconds into f's calls, waits for
// f, and starts the server again.
func (s *sim) killDuring(f func()) {
	pid := s.a.pid
	t := time.AfterFunc(time.Duration(s.rng.Intn(30))*time.Millisecond, func() { syscall.Kill(pid, syscall.SIGKILL) })
	f()
	if t.Stop() { // f was quicker: kill it now, between two calls
		syscall.Kill(pid, syscall.SIGKILL)
	}
	s.event("memhost serve killed (SIGKILL)")
	s.stats.month.Kills++
	<-s.a.done
	s.a.server = nil
	s.a.startServer()
}

// dailyLog appends an entry to the machine's daily log.
func (s *sim) dailyLog(m *machine) {
	code := s.ledger.code(m.name)
	text := fmt.Sprintf("Worked on %s with %s: %s (%s)", pick(s.rng, topics), pick(s.rng, people), s.phraseOr(), code)
	r := m.call("daily-log", "", "daily-log", text)
	if s.ack(r) {
		s.ledger.add(write{Kind: "daily", Machine: m.name, Day: s.day, Full: text, Code: code})
	} else if s.full {
		s.ledger.unacked = append(s.ledger.unacked, write{Kind: "daily", Machine: m.name, Day: s.day, Full: text, Code: code})
	}
}

// remember stores a preference or a list item.
func (s *sim) remember(m *machine) {
	code := s.ledger.code(m.name)
	text := fmt.Sprintf("I prefer %s when %s (%s)", pick(s.rng, likes), s.phraseOr(), code)
	if s.rng.Intn(2) == 0 {
		text = fmt.Sprintf("Add notes on %s to the reading list (%s)", s.phraseOr(), code)
	}
	var resp struct {
		Path string `json:"path"`
	}
	r := m.call("remember", "", "--json", "remember", text)
	if s.ack(r) {
		json.Unmarshal([]byte(r.Out), &resp)
		// The stored line is the text as routed: the code is in it.
		s.ledger.add(write{Kind: "remember", Machine: m.name, Day: s.day, Full: text, Code: code, Path: resp.Path})
	} else if s.full {
		s.ledger.unacked = append(s.ledger.unacked, write{Kind: "remember", Machine: m.name, Day: s.day, Full: text, Code: code})
	}
}

// factBook is what the agent was last told of each person: the values the
// facts must hold as current.
type factBook struct {
	latest map[string]map[string]string // person → attribute → value
	phones int
}

func newFactBook() *factBook { return &factBook{latest: map[string]map[string]string{}} }

var factAttrs = []string{"works at", "lives in", "phone"}

// changeFact tells memhost a person's new employer, city or phone number,
// superseding the old one (knowledge-update).
func (s *sim) changeFact() {
	p := pick(s.rng, people)
	attr := pick(s.rng, factAttrs)
	cur := s.facts.latest[p][attr]
	var v string
	for v == "" || v == cur {
		switch attr {
		case "works at":
			v = pick(s.rng, companies)
		case "lives in":
			v = pick(s.rng, cities)
		default:
			s.facts.phones++
			v = fmt.Sprintf("555-%04d", 100+s.facts.phones)
		}
	}
	r := s.a.call("fact add", "", "fact", "add", p, attr, v, "--source", "sim day "+fmt.Sprint(s.day+1))
	if s.ack(r) {
		if s.facts.latest[p] == nil {
			s.facts.latest[p] = map[string]string{}
		}
		s.facts.latest[p][attr] = v
	}
}

// factRecall asks for every fact the agent was told: the current facts
// of the person must hold exactly the latest value of each attribute, and
// the memory context for a question about it must quote that value.
func (s *sim) factRecall() recallScore {
	var sc recallScore
	for _, p := range people {
		attrs := s.facts.latest[p]
		if len(attrs) == 0 {
			continue
		}
		var got struct {
			Facts []struct {
				Attribute, Value, Status string
			} `json:"facts"`
		}
		err := s.a.jsonCall("facts", &got, "facts", p)
		for _, attr := range factAttrs {
			want, ok := attrs[attr]
			if !ok {
				continue
			}
			sc.Asked++
			var current []string
			for _, f := range got.Facts {
				if f.Attribute == attr && f.Status == "current" {
					current = append(current, f.Value)
				}
			}
			if err != nil || len(current) != 1 || current[0] != want {
				s.ledger.failures = append(s.ledger.failures, fmt.Sprintf("%s: facts %q %s: current %q, told %q last (%v)", s.now.Format("2006-01-02"), p, attr, current, want, err))
				continue
			}
			q := map[string]string{"works at": "Where does %s work?", "lives in": "Which city does %s live in?", "phone": "What is %s's phone number?"}[attr]
			r := s.a.call("context", "", "context", "--query", fmt.Sprintf(q, p))
			if r.Fail == nil && strings.Contains(r.Out, want) {
				sc.Found++
			}
		}
	}
	return sc
}

// notebookRecall searches for up to ten earlier writes in the words they
// were written in (without their code): found when a result among the
// top five holds the code.
func (s *sim) notebookRecall() recallScore {
	var sc recallScore
	pool := s.ledger.byKind("daily", "remember")
	if len(pool) == 0 {
		return sc
	}
	for i := 0; i < 10; i++ {
		w := pool[s.rng.Intn(len(pool))]
		text := w.Full
		query := strings.TrimSpace(text[:strings.LastIndex(text, "(")])
		var got struct {
			Mode    string `json:"mode"`
			Results map[string][]struct {
				Snippet string `json:"snippet"`
			} `json:"results"`
		}
		sc.Asked++
		if err := s.a.jsonCall("recall", &got, "recall", "--max-results", "5", query); err != nil {
			s.failure(err)
			continue
		}
		s.stats.month.Hybrid.count(got.Mode)
		for _, rs := range got.Results {
			for _, r := range rs {
				if strings.Contains(r.Snippet, w.Code) {
					sc.Found++
					goto next
				}
			}
		}
	next:
	}
	return sc
}

// askDue asks the conversation questions whose last haystack session has
// been replayed: found when an answer session is among the five first
// sessions of conversation-search's results.
func (s *sim) askDue() {
	for len(s.corpus.Questions) > 0 && s.corpus.Questions[0].Last < s.next {
		q := s.corpus.Questions[0]
		s.corpus.Questions = s.corpus.Questions[1:]
		var got struct {
			Mode    string `json:"mode"`
			Results []struct {
				Session string `json:"session"`
			} `json:"results"`
		}
		s.stats.month.Conversations.Asked++
		if err := s.a.jsonCall("conversation-search", &got, "conversation-search", "--max-results", "50", q.Text); err != nil {
			s.failure(err)
			continue
		}
		s.stats.month.Hybrid.count(got.Mode)
		var top []string
		seen := map[string]bool{}
		for _, r := range got.Results {
			if !seen[r.Session] && len(top) < 5 {
				seen[r.Session] = true
				top = append(top, r.Session)
			}
		}
		for _, sid := range top {
			if q.Answers[s.convOf[sid]] {
				s.stats.month.Conversations.Found++
				break
			}
		}
	}
}

// personEdit is the person at their editor between sessions: a new page
// of their own, a line added to one, a page renamed (its links left as
// they were, as an editor that does not know memhost leaves them), or a
// line added to a page memhost writes.
func (s *sim) personEdit() {
	dir := filepath.Join(s.a.home, "notebook", "knowledge", "topics")
	own, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	code := s.ledger.code("p")
	line := fmt.Sprintf("- thought about %s today (%s)\n", pick(s.rng, topics), code)
	var path string
	switch x := s.rng.Float64(); {
	case len(own) == 0 || x < 0.3:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			s.fatal(err)
		}
		path = filepath.Join(dir, fmt.Sprintf("topic-%s.md", code))
		if err := os.WriteFile(path, []byte("# Notes on "+pick(s.rng, topics)+"\n\n"+line), 0o644); err != nil {
			s.fatal(err)
		}
	case x < 0.4:
		from := pick(s.rng, own)
		to := filepath.Join(dir, fmt.Sprintf("renamed-%s.md", code))
		if err := os.Rename(from, to); err != nil {
			s.fatal(err)
		}
		s.ledger.renamed(from, to)
		s.event("person renamed %s to %s", filepath.Base(from), filepath.Base(to))
		return
	case x < 0.85:
		path = pick(s.rng, own)
		appendFile(s, path, line)
	default:
		path = filepath.Join(s.a.home, "notebook", "reference", "preferences.md")
		if _, err := os.Stat(path); err != nil {
			return
		}
		appendFile(s, path, "\n"+line)
	}
	s.ledger.add(write{Kind: "edit", Machine: "p", Day: s.day, Full: line, Code: code})
}

// appendFile is an editor's save: the whole file written again in place.
func appendFile(s *sim, path, line string) {
	b, err := os.ReadFile(path)
	if err != nil {
		s.fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	if err := os.WriteFile(path, append(b, line...), 0o644); err != nil {
		s.fatal(err)
	}
}

// phrase is a few words of a conversation's first user turn: what the
// day's own writes are about, so that each can be searched for in words
// of its own.
func phrase(turns []turn) string {
	for _, t := range turns {
		if t.Role != "user" {
			continue
		}
		var words []string
		for _, w := range strings.Fields(t.Content) {
			w = strings.Trim(w, "\"'()[]{}*#:;,.!?`")
			if w != "" && !strings.ContainsAny(w, "<>|\\/") {
				words = append(words, w)
			}
			if len(words) == 8 {
				break
			}
		}
		if len(words) >= 4 {
			return strings.ToLower(strings.Join(words, " "))
		}
	}
	return ""
}

// phraseOr is the last session's phrase, or a topic on a day without one.
func (s *sim) phraseOr() string {
	if s.lastPhrase != "" {
		return s.lastPhrase
	}
	return pick(s.rng, topics)
}
