package mcp

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
)

// The groups memory_search searches: host.SourceNotebook, SourceDaily and
// SourceSessions (TestHostConstants holds them equal).
const (
	sourceNotebook = "notebook"
	sourceDaily    = "daily"
	sourceSessions = "sessions"
)

// addTools registers the tools: the notebook's and the conversations'
// here, then facts.go's, skills.go's, vault.go's and health.go's.
func (s *srv) addTools() {
	addTool(s, api.OpRecall, tool[memhost.RecallRequest, memhost.RecallResponse]{
		name: "memory_search", title: "Search memory",
		description: "Search memory before answering from it: notebook pages and daily logs, and with sources past conversations. Read more with memory_get.",
		hide:        []string{"tags", "path"},
		schema: func(sc *jsonschema.Schema) {
			sc.Properties["sources"].Items.Enum = []any{sourceNotebook, sourceDaily, sourceSessions}
			atLeast(sc, "maxResults", 1)
			fraction(sc, "minScore")
		},
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.RecallRequest, r memhost.RecallResponse) string {
			return renderSearch(r)
		},
	})

	addTool(s, api.OpGet, tool[memhost.GetRequest, memhost.GetResponse]{
		name: "memory_get", title: "Read a page",
		description: "Read a notebook page, or lines of it (e.g. around a search result).",
		schema: func(sc *jsonschema.Schema) {
			atLeast(sc, "startLine", 1)
			atLeast(sc, "lines", 1)
		},
		page: func(r memhost.GetRequest) string { return r.Path },
		check: func(r memhost.GetResponse) error {
			if len(r.Text) > MaxContentBytes {
				return fault.BadInputf("lines", "lines %d-%d of %s are %d bytes; one call reads at most %d (1 MB): read fewer lines at once (startLine, lines)",
					r.Lines.Start, r.Lines.End, r.Path, len(r.Text), MaxContentBytes)
			}
			return nil
		},
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.GetRequest, r memhost.GetResponse) string { return r.Text },
	})

	addTool(s, api.OpRemember, tool[memhost.RememberRequest, memhost.RememberResponse]{
		name: "remember", title: "Remember", idempotent: true,
		description: "Store one durable fact, preference, contact or list item on the notebook page it belongs to " +
			"(routed from the text unless category and file are given); text already there is not added again.",
		schema: func(sc *jsonschema.Schema) {
			sc.Properties["category"].Enum = []any{"lists", "reference", "knowledge"}
			notEmpty(sc, "text")
		},
		requestID: func(r *memhost.RememberRequest) *string { return &r.RequestID },
		prepare:   func(r *memhost.RememberRequest) error { return checkSize("text", r.Text) },
		done: func(call *mcpsdk.CallToolRequest, req memhost.RememberRequest, r memhost.RememberResponse) string {
			if r.Duplicate {
				return fmt.Sprintf("Already remembered: %s; nothing written.", r.Where())
			}
			s.wrote(call, stored{Tool: "remember", Path: r.Path, Section: r.Section, Lines: r.Lines, Text: req.Text})
			return fmt.Sprintf("Remembered in %s.%s", r.Where(), routedBy(r))
		},
	})

	addTool(s, api.OpWrite, tool[memhost.WriteRequest, memhost.WriteResponse]{
		name: "notebook_write", title: "Write a page", destructive: true,
		description: "Append markdown to a notebook page or H2 section, or replace it. For single facts use remember, for events daily_log.",
		schema:      func(sc *jsonschema.Schema) { notEmpty(sc, "text") },
		requestID:   func(r *memhost.WriteRequest) *string { return &r.RequestID },
		prepare:     func(r *memhost.WriteRequest) error { return checkSize("text", r.Text) },
		done: func(call *mcpsdk.CallToolRequest, req memhost.WriteRequest, r memhost.WriteResponse) string {
			s.wrote(call, stored{Tool: "notebook_write", Path: r.Path, Section: r.Section, Lines: r.Lines, Text: req.Text})
			verb := "Appended to"
			if req.Replace {
				verb = "Replaced"
			}
			if r.Created {
				verb = "Created"
			}
			return fmt.Sprintf("%s %s%s, lines %d-%d.", verb, r.Path, inSection(r.Section), r.Lines.Start, r.Lines.End)
		},
	})

	addTool(s, api.OpDailyLog, tool[memhost.DailyLogRequest, memhost.DailyLogResponse]{
		name: "daily_log", title: "Log to today's daily log",
		description: "Add a timestamped entry to today's daily log: what happened, was decided or learnt.",
		schema:      func(sc *jsonschema.Schema) { notEmpty(sc, "text") },
		requestID:   func(r *memhost.DailyLogRequest) *string { return &r.RequestID },
		prepare:     func(r *memhost.DailyLogRequest) error { return checkSize("text", r.Text) },
		done: func(call *mcpsdk.CallToolRequest, req memhost.DailyLogRequest, r memhost.DailyLogResponse) string {
			s.wrote(call, stored{Tool: "daily_log", Path: r.Path, Section: r.Heading, Lines: r.Lines, Text: req.Text})
			return fmt.Sprintf("Logged in %s: %s (lines %d-%d).", r.Path, r.Heading, r.Lines.Start, r.Lines.End)
		},
	})

	addTool(s, api.OpConversationSearch, tool[memhost.ConversationSearchRequest, memhost.ConversationSearchResponse]{
		name: "conversation_search", title: "Search past conversations",
		description: "Search past conversations: what the user or you said, and when.",
		schema:      func(sc *jsonschema.Schema) { atLeast(sc, "maxResults", 1) },
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.ConversationSearchRequest, r memhost.ConversationSearchResponse) string {
			return renderTurns(r)
		},
	})

	addTool(s, api.OpContext, tool[memhost.ContextRequest, memhost.ContextResponse]{
		name: "context", title: "Memory context",
		description: "Memory for a prompt. No arguments: reference pages and recent daily logs (call it at session start unless given them). " +
			"query: the memories bearing on it, within budget tokens. session: its working memory.",
		hide: []string{"notSession"},
		schema: func(sc *jsonschema.Schema) {
			sc.Properties["tiers"].Items.Enum = []any{memhost.TierFacts, memhost.TierEpisodes, memhost.TierSkills, memhost.TierNotebook}
			atLeast(sc, "budget", 1)
			atLeast(sc, "perTier", 1)
			fraction(sc, "minScore")
		},
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.ContextRequest, r memhost.ContextResponse) string {
			return r.Text
		},
	})

	addTool(s, api.OpStatus, tool[memhost.StatusRequest, memhost.StatusResponse]{
		name: "memory_status", title: "Memory status",
		description: "The memory index's state: pages indexed and pending, search mode and why, embeddings model.",
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.StatusRequest, r memhost.StatusResponse) string {
			return renderStatus(r)
		},
	})

	addTool(s, api.OpEpisodes, tool[memhost.EpisodesRequest, memhost.EpisodesResponse]{
		name: "episodes", title: "Write the episode logs", idempotent: true,
		description: "Write a day's episode log from its transcripts, as memhost does when a session ends: for chats that never end, or past days.",
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.EpisodesRequest, r memhost.EpisodesResponse) string {
			var b strings.Builder
			for _, d := range r.Days {
				fmt.Fprintf(&b, "%s: %s %s (%d sessions, %d messages)\n", d.Date, d.State, d.Path, d.Sessions, d.Messages)
			}
			return b.String()
		},
	})

	s.addFactTools()   // facts.go
	s.addSkillTools()  // skills.go
	s.addVaultTools()  // vault.go
	s.addHealthTools() // health.go
}

// atLeast bounds an integer argument below.
func atLeast(sc *jsonschema.Schema, arg string, min float64) { sc.Properties[arg].Minimum = ptr(min) }

// fraction bounds a number argument to 0..1.
func fraction(sc *jsonschema.Schema, arg string) {
	sc.Properties[arg].Minimum, sc.Properties[arg].Maximum = ptr(0.0), ptr(1.0)
}

// notEmpty refuses an empty string argument.
func notEmpty(sc *jsonschema.Schema, args ...string) {
	for _, a := range args {
		sc.Properties[a].MinLength = ptr(1)
	}
}

// renderSearch is memory_search's text: one line per result, by group.
func renderSearch(r memhost.RecallResponse) string {
	var b strings.Builder
	n := len(r.Results.Notebook) + len(r.Results.Daily) + len(r.Results.Sessions)
	fmt.Fprintf(&b, "%d %s for %q (%s search", n, plural(n, "result"), r.Query, r.Mode)
	if r.Reason != "" {
		fmt.Fprintf(&b, ": %s", r.Reason)
	}
	b.WriteString(")\n")
	for _, g := range []struct {
		name string
		rs   []memhost.Result
	}{{sourceNotebook, r.Results.Notebook}, {sourceDaily, r.Results.Daily}, {sourceSessions, r.Results.Sessions}} {
		if len(g.rs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", g.name)
		for _, x := range g.rs {
			where := x.Path
			if x.Session != "" {
				where = "session " + x.Session
			}
			fmt.Fprintf(&b, "- %s lines %d-%d", where, x.Lines.Start, x.Lines.End)
			if x.Heading != "" {
				fmt.Fprintf(&b, " (%s)", x.Heading)
			}
			fmt.Fprintf(&b, " score %.2f: %s\n", x.Score, oneLine(x.Snippet))
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// renderTurns is conversation_search's text.
func renderTurns(r memhost.ConversationSearchResponse) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s for %q (%s search", len(r.Results), plural(len(r.Results), "turn"), r.Query, r.Mode)
	if r.Reason != "" {
		fmt.Fprintf(&b, ": %s", r.Reason)
	}
	b.WriteString(")")
	for _, t := range r.Results {
		fmt.Fprintf(&b, "\n- session %s turn %s", t.Session, strings.Join(t.Turns, ","))
		if t.Timestamp != "" {
			fmt.Fprintf(&b, " at %s", t.Timestamp)
		}
		if t.Role != "" {
			fmt.Fprintf(&b, " (%s)", t.Role)
		}
		if t.Channel != "" {
			fmt.Fprintf(&b, " via %s", strings.TrimSuffix(t.Channel+"/"+t.SourceID, "/"))
		}
		fmt.Fprintf(&b, " score %.2f: %s", t.Score, oneLine(t.Snippet))
	}
	return b.String()
}

// renderStatus is memory_status's text.
func renderStatus(r memhost.StatusResponse) string {
	s := fmt.Sprintf("%d pages, %d chunks indexed; %d stale; search: %s", r.Files, r.Chunks, r.Stale, r.Mode)
	if r.Reason != "" {
		s += " (" + r.Reason + ")"
	}
	if r.Provider != "" {
		s += fmt.Sprintf("; provider %s, model %s", r.Provider, r.Model)
	}
	return s
}

// routedBy tells, for an automatic remember, who chose the page.
func routedBy(r memhost.RememberResponse) string {
	if r.Routing == "" {
		return ""
	}
	return " Chosen by the " + r.Routing + "."
}
