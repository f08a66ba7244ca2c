package mcp

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/episodes"
	"github.com/memhost/memhost/host/fault"
	"github.com/memhost/memhost/host/indexer"
	"github.com/memhost/memhost/host/notebook"
)

// Tool arguments. Their JSON schemas are inferred from these types (a field
// without omitempty is required; unknown arguments are refused) and
// completed by the schema functions of addTools (enums, bounds).

// SearchArgs are memory_search's arguments.
type SearchArgs struct {
	Query      string   `json:"query" jsonschema:"what to look for, in natural language or keywords (e.g. \"Alice's phone number\")"`
	Sources    []string `json:"sources,omitempty" jsonschema:"which groups to search: notebook (lists, reference, knowledge pages), daily (daily logs), sessions (past conversations); default notebook and daily"`
	MaxResults int      `json:"maxResults,omitempty" jsonschema:"most results to return in all groups together (default from the configuration: 15)"`
	MinScore   *float64 `json:"minScore,omitempty" jsonschema:"drop results scoring below this, 0..1 (default from the configuration: 0.25)"`
}

// GetArgs are memory_get's arguments.
type GetArgs struct {
	Path      string `json:"path" jsonschema:"page path inside the notebook, as memory_search returns it (e.g. reference/contacts.md)"`
	StartLine int    `json:"startLine,omitempty" jsonschema:"first line to read, 1-based (default 1)"`
	Lines     int    `json:"lines,omitempty" jsonschema:"how many lines to read (default: to the end of the page)"`
}

// RememberArgs are remember's arguments.
type RememberArgs struct {
	Content  string `json:"content" jsonschema:"the fact, preference, contact detail or list item to store, in one short self-contained sentence (e.g. \"Alice's phone is +44 20 7946 0000\")"`
	Category string `json:"category,omitempty" jsonschema:"lists (things to buy or do), reference (contacts, preferences, standing orders) or knowledge (facts); default: chosen from the content"`
	File     string `json:"file,omitempty" jsonschema:"page name within the category without folder or .md (e.g. contacts, shopping); default: chosen from the content"`
	Section  string `json:"section,omitempty" jsonschema:"H2 section of the page to add under (e.g. a person's name); created when missing"`
	Auto     bool   `json:"auto,omitempty" jsonschema:"let memhost's generator model choose category, page, section and tags (give none of them); its rules choose when no generator is configured"`
}

// WriteArgs are notebook_write's arguments.
type WriteArgs struct {
	Page    string `json:"page" jsonschema:"page path inside the notebook (e.g. knowledge/projects.md); created with its folders when missing"`
	Content string `json:"content" jsonschema:"markdown to write"`
	Section string `json:"section,omitempty" jsonschema:"H2 section to write in (created when missing); default: the whole page"`
	Replace bool   `json:"replace,omitempty" jsonschema:"replace the section (or, without section, the whole page) instead of appending to it"`
}

// DailyLogArgs are daily_log's arguments.
type DailyLogArgs struct {
	Entry string `json:"entry" jsonschema:"what happened, decided or was learnt; the first line becomes the entry's heading, further lines its body"`
}

// ConversationSearchArgs are conversation_search's arguments.
type ConversationSearchArgs struct {
	Query      string `json:"query" jsonschema:"what was said, in natural language or keywords"`
	Session    string `json:"session,omitempty" jsonschema:"search only this session id"`
	Since      string `json:"since,omitempty" jsonschema:"only turns at or after this time: YYYY-MM-DD or RFC 3339"`
	Until      string `json:"until,omitempty" jsonschema:"only turns at or before this time: YYYY-MM-DD (the whole day) or RFC 3339"`
	MaxResults int    `json:"maxResults,omitempty" jsonschema:"most results to return (default 10)"`
	Channel    string `json:"channel,omitempty" jsonschema:"only turns from this channel (whatsapp, telegram, cli, ...)"`
	SourceID   string `json:"sourceId,omitempty" jsonschema:"only turns from this chat or contact in the channel (needs channel)"`
}

// ContextArgs are context's arguments: none for the notebook's block.
type ContextArgs struct {
	Query    string   `json:"query,omitempty" jsonschema:"assemble the memory context for this text (the conversation's topic or the user's last message)"`
	Session  string   `json:"session,omitempty" jsonschema:"a session's working memory: the block, the memory for query (default its last user turn), its summary and recent turns"`
	Budget   int      `json:"budget,omitempty" jsonschema:"tokens of the memory context (default 5000)"`
	Tiers    []string `json:"tiers,omitempty" jsonschema:"tiers to search, filled in this order: facts, episodes, skills, notebook (default all)"`
	PerTier  int      `json:"perTier,omitempty" jsonschema:"items a tier may give (default 20)"`
	MinScore *float64 `json:"minScore,omitempty" jsonschema:"drop memories scoring below this, 0..1"`
	HalfLife string   `json:"halfLife,omitempty" jsonschema:"weigh recent memories higher: a score halves with each half-life of age, e.g. 30d (default off)"`
	Channel  string   `json:"channel,omitempty" jsonschema:"only episodes from this channel"`
	SourceID string   `json:"sourceId,omitempty" jsonschema:"only episodes from this chat or contact in the channel (needs channel)"`
	Entity   string   `json:"entity,omitempty" jsonschema:"only facts of this entity (its slug)"`
}

// EpisodesArgs are episodes' arguments.
type EpisodesArgs struct {
	Date  string `json:"date,omitempty" jsonschema:"the day to write, YYYY-MM-DD (default today)"`
	Since string `json:"since,omitempty" jsonschema:"the first day of a range instead, YYYY-MM-DD (with until; at most 366 days)"`
	Until string `json:"until,omitempty" jsonschema:"the last day of the range, YYYY-MM-DD"`
}

// NoArgs is the arguments of tools that take none.
type NoArgs struct{}

func (s *srv) addTools() {
	no, yes := new(bool), new(bool)
	*yes = true
	read := &mcpsdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: no}
	sources := func(sc *jsonschema.Schema) {
		sc.Properties["sources"].Items.Enum = []any{host.SourceNotebook, host.SourceDaily, host.SourceSessions}
		sc.Properties["maxResults"].Minimum = ptr(1.0)
	}

	add(s, &mcpsdk.Tool{Name: "memory_search", Title: "Search memory", Annotations: read,
		Description: "Search the notebook (and optionally past conversations) for what you were told or stored before. " +
			"Returns results grouped by source (notebook, daily, sessions), best first, each with its page path, heading, snippet, score (0..1) and line range; " +
			"read more of a page with memory_get. mode says whether the search was hybrid (meaning and keywords) or keyword-only, and reason why."},
		func(sc *jsonschema.Schema) {
			sources(sc)
			sc.Properties["minScore"].Minimum, sc.Properties["minScore"].Maximum = ptr(0.0), ptr(1.0)
		}, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a SearchArgs) (memhost.RecallResponse, string, error) {
			r, err := s.ops.Recall(ctx, memhost.RecallRequest{Query: a.Query, Sources: a.Sources, MaxResults: a.MaxResults, MinScore: a.MinScore})
			return r, renderSearch(r), err
		})

	add(s, &mcpsdk.Tool{Name: "memory_get", Title: "Read a page", Annotations: read,
		Description: "Read a notebook page, or some of its lines (startLine, lines), e.g. around a memory_search result. " +
			"Returns the text, the lines read and the page's total lines. Pages over 1 MB must be read in parts."},
		func(sc *jsonschema.Schema) {
			sc.Properties["startLine"].Minimum, sc.Properties["lines"].Minimum = ptr(1.0), ptr(1.0)
		}, map[string]string{"path": "path"},
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a GetArgs) (memhost.GetResponse, string, error) {
			r, err := s.ops.Get(ctx, memhost.GetRequest{Path: a.Path, StartLine: a.StartLine, Lines: a.Lines})
			if err == nil && len(r.Text) > MaxContentBytes {
				return r, "", fault.BadInputf("lines", "lines %d-%d of %s are %d bytes, more than one call returns (%d); read fewer lines at a time (the page has %d)",
					r.Lines.Start, r.Lines.End, r.Path, len(r.Text), MaxContentBytes, r.TotalLines)
			}
			return r, r.Text, err
		})

	add(s, &mcpsdk.Tool{Name: "conversation_search", Title: "Search past conversations", Annotations: read,
		Description: "Search the transcripts of past conversations: what the user or you said, and when. " +
			"Returns turns best first with their session, turn ids, role, time, snippet and the end of the turn before (what it answers)."},
		func(sc *jsonschema.Schema) { sc.Properties["maxResults"].Minimum = ptr(1.0) }, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a ConversationSearchArgs) (memhost.ConversationSearchResponse, string, error) {
			r, err := s.ops.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: a.Query, Session: a.Session, Since: a.Since, Until: a.Until, MaxResults: a.MaxResults, Channel: a.Channel, SourceID: a.SourceID})
			return r, renderTurns(r), err
		})

	add(s, &mcpsdk.Tool{Name: "context", Title: "Memory context", Annotations: read,
		Description: "Without arguments, the memory block for a system prompt: every reference page and the recent daily logs, within the configured size limits; " +
			"call it at the start of a session when your runtime has not given it to you. " +
			"With a query, the memories that bear on it from every tier (facts, then conversation episodes and daily logs, skills, notebook pages), each once with its source, within a token budget (default 5000). " +
			"With a session, that session's working memory."},
		func(sc *jsonschema.Schema) {
			sc.Properties["tiers"].Items.Enum = []any{memhost.TierFacts, memhost.TierEpisodes, memhost.TierSkills, memhost.TierNotebook}
			sc.Properties["budget"].Minimum, sc.Properties["perTier"].Minimum = ptr(1.0), ptr(1.0)
			sc.Properties["minScore"].Minimum, sc.Properties["minScore"].Maximum = ptr(0.0), ptr(1.0)
		}, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a ContextArgs) (memhost.ContextResponse, string, error) {
			r, err := s.ops.Context(ctx, memhost.ContextRequest{Query: a.Query, Session: a.Session, Budget: a.Budget, Tiers: a.Tiers, PerTier: a.PerTier,
				MinScore: a.MinScore, HalfLife: a.HalfLife, Channel: a.Channel, SourceID: a.SourceID, Entity: a.Entity})
			return r, r.Text, err
		})

	add(s, &mcpsdk.Tool{Name: "memory_status", Title: "Memory status", Annotations: read,
		Description: "The state of the memory index: pages and chunks indexed, pages waiting to be indexed, search mode (hybrid or keyword, and why), embeddings provider and model."},
		nil, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, _ NoArgs) (memhost.StatusResponse, string, error) {
			r, err := s.ops.Status(ctx, memhost.StatusRequest{})
			return r, renderStatus(r), err
		})

	s.addFactTools(read)   // facts.go; fact_add unless read-only
	s.addSkillTools(read)  // skills.go; skill_learn and skill_review unless read-only
	s.addVaultTools(read)  // vault.go; mv, rollup, prune unless read-only
	s.addHealthTools(read) // health.go

	if s.opts.ReadOnly {
		return
	}

	add(s, &mcpsdk.Tool{Name: "remember", Title: "Remember",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: no, IdempotentHint: true, OpenWorldHint: no},
		Description: "Store a durable fact, preference, contact detail or list item in the notebook, as a list item on the right page " +
			"(routed from the content unless category and file are given). Text already on the page is not added twice. " +
			"Returns where it was written (page, section, lines), or duplicate: true. Content up to 1 MB."},
		func(sc *jsonschema.Schema) {
			sc.Properties["category"].Enum = []any{"lists", "reference", "knowledge"}
			sc.Properties["content"].MinLength = ptr(1)
		}, map[string]string{"text": "content"},
		func(ctx context.Context, req *mcpsdk.CallToolRequest, a RememberArgs) (memhost.RememberResponse, string, error) {
			if err := checkSize("content", a.Content); err != nil {
				return memhost.RememberResponse{}, "", err
			}
			r, err := s.ops.Remember(ctx, memhost.RememberRequest{Text: a.Content, Category: a.Category, File: a.File, Section: a.Section, Auto: a.Auto, RequestID: requestID(req)})
			if err != nil {
				return r, "", err
			}
			if r.Duplicate {
				return r, fmt.Sprintf("Already remembered: %s; nothing written.", r.Where()), nil
			}
			s.wrote(req, stored{Tool: "remember", Path: r.Path, Section: r.Section, Lines: r.Lines, Text: a.Content})
			return r, fmt.Sprintf("Remembered in %s.%s", r.Where(), routedBy(r)), nil
		})

	add(s, &mcpsdk.Tool{Name: "notebook_write", Title: "Write a page",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: yes, IdempotentHint: false, OpenWorldHint: no},
		Description: "Write markdown to a notebook page: append to the page or to one of its H2 sections, or with replace: true replace the section " +
			"(or the whole page when no section is given). Creates the page and its folders when missing. Prefer remember for single facts and daily_log for events. " +
			"Returns the page, section and lines written. Content up to 1 MB."},
		func(sc *jsonschema.Schema) { sc.Properties["content"].MinLength = ptr(1) },
		map[string]string{"text": "content", "path": "page"},
		func(ctx context.Context, req *mcpsdk.CallToolRequest, a WriteArgs) (memhost.WriteResponse, string, error) {
			if err := checkSize("content", a.Content); err != nil {
				return memhost.WriteResponse{}, "", err
			}
			r, err := s.ops.Write(ctx, memhost.WriteRequest{Path: a.Page, Text: a.Content, Section: a.Section, Replace: a.Replace, RequestID: requestID(req)})
			if err != nil {
				return r, "", err
			}
			s.wrote(req, stored{Tool: "notebook_write", Path: r.Path, Section: r.Section, Lines: r.Lines, Text: a.Content})
			verb := "Appended to"
			if a.Replace {
				verb = "Replaced"
			}
			if r.Created {
				verb = "Created"
			}
			return r, fmt.Sprintf("%s %s%s, lines %d-%d.", verb, r.Path, inSection(r.Section), r.Lines.Start, r.Lines.End), nil
		})

	add(s, &mcpsdk.Tool{Name: "daily_log", Title: "Log to today's daily log",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: no, IdempotentHint: false, OpenWorldHint: no},
		Description: "Append a timestamped entry to today's daily log (daily/YYYY-MM-DD.md): what happened, was decided or learnt in this session. " +
			"Recent daily logs are part of the session-start context. Returns the page, the entry's heading and its lines. Entry up to 1 MB."},
		func(sc *jsonschema.Schema) { sc.Properties["entry"].MinLength = ptr(1) },
		map[string]string{"text": "entry"},
		func(ctx context.Context, req *mcpsdk.CallToolRequest, a DailyLogArgs) (memhost.DailyLogResponse, string, error) {
			if err := checkSize("entry", a.Entry); err != nil {
				return memhost.DailyLogResponse{}, "", err
			}
			r, err := s.ops.DailyLog(ctx, memhost.DailyLogRequest{Text: a.Entry, RequestID: requestID(req)})
			if err != nil {
				return r, "", err
			}
			s.wrote(req, stored{Tool: "daily_log", Path: r.Path, Section: r.Heading, Lines: r.Lines, Text: a.Entry})
			return r, fmt.Sprintf("Logged in %s: %s (lines %d-%d).", r.Path, r.Heading, r.Lines.Start, r.Lines.End), nil
		})

	add(s, &mcpsdk.Tool{Name: "episodes", Title: "Write the episode logs",
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: no, IdempotentHint: true, OpenWorldHint: no},
		Description: "Write the episode logs: a notebook page a day (episodes/YYYY-MM-DD.md) holding that day's conversations, session by session, " +
			"generated from the transcripts. Pages a person edited are kept as they are. Memhost writes them when a session ends; " +
			"call this for a conversation that has no end (a chat channel) or to write past days. Returns each day's page and state (written, unchanged, kept, empty)."},
		nil, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a EpisodesArgs) (memhost.EpisodesResponse, string, error) {
			r, err := s.ops.Episodes(ctx, memhost.EpisodesRequest{Date: a.Date, Since: a.Since, Until: a.Until})
			var b strings.Builder
			for _, d := range r.Days {
				fmt.Fprintf(&b, "%s: %s %s (%d sessions, %d messages)\n", d.Date, d.State, d.Path, d.Sessions, d.Messages)
				if d.State == episodes.Written {
					s.touched(Change{Path: d.Path})
				}
			}
			return r, b.String(), err
		})
}

// add registers a typed tool: schema, when set, completes the input schema
// inferred from In; fields names the tool's argument for a host error's
// field where they differ; fn returns the structured result and its short
// text rendering. An error of fn becomes a tool error (IsError) worded for
// the model.
func add[In, Out any](s *srv, t *mcpsdk.Tool, schema func(*jsonschema.Schema), fields map[string]string,
	fn func(context.Context, *mcpsdk.CallToolRequest, In) (Out, string, error)) {
	sc, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: tool %s: %v", t.Name, err))
	}
	// An optional argument is left out, never null: one type each, which
	// clients that map schemas onto a single-type dialect (Gemini's) need.
	for _, p := range sc.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	if schema != nil {
		schema(sc)
	}
	t.InputSchema = sc
	mcpsdk.AddTool(s.sdk, t, func(ctx context.Context, req *mcpsdk.CallToolRequest, in In) (*mcpsdk.CallToolResult, Out, error) {
		out, text, err := fn(ctx, req, in)
		if err != nil {
			var zero Out
			return nil, zero, errors.New(s.explain(ctx, err, fields))
		}
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: text}}}, out, nil
	})
}

// explain words a host error for a model: the argument it is about, what
// to do, and for a missing page the pages that do exist in its folder.
func (s *srv) explain(ctx context.Context, err error, fields map[string]string) string {
	msg := err.Error()
	if f := fault.FieldOf(err); f != "" {
		if a, ok := fields[f]; ok {
			f = a
		}
		if !strings.HasPrefix(msg, f) {
			msg = f + ": " + msg
		}
	}
	switch fault.KindOf(err) {
	case fault.NotFound:
		if p, ok := missingPage(err); ok {
			msg += s.folderPages(ctx, p)
		}
	case fault.Outside:
		msg += " (pages are paths inside the notebook, such as reference/contacts.md)"
	case fault.Unavailable:
		msg += " (this may work if you try again later)"
	case fault.Conflict:
		msg += " (try again)"
	case fault.Internal:
		msg = "memhost failed: " + msg
	}
	return msg
}

// missingPage returns the page a not-found error names.
func missingPage(err error) (string, bool) {
	// A *notebook.PathError, in this process and through the server's
	// client alike (the API sends its path).
	var pe *notebook.PathError
	if errors.As(err, &pe) {
		return pe.Path, true
	}
	return "", false
}

// folderPages lists the pages of p's folder, for a model that named a page
// that does not exist: "; pages in reference/: contacts.md, preferences.md".
func (s *srv) folderPages(ctx context.Context, p string) string {
	files, err := s.ops.Files(ctx, memhost.FilesRequest{})
	if err != nil {
		return ""
	}
	dir := path.Dir(p)
	var names, folders []string
	seen := map[string]bool{}
	for _, f := range files.Files {
		if !isPage(f) {
			continue
		}
		if path.Dir(f.Path) == dir {
			names = append(names, path.Base(f.Path))
		}
		if top, _, ok := strings.Cut(f.Path, "/"); ok && !seen[top] {
			seen[top] = true
			folders = append(folders, top+"/")
		}
	}
	const most = 30
	switch {
	case len(names) > most:
		return fmt.Sprintf("; pages in %s/: %s, … (%d in all)", dir, strings.Join(names[:most], ", "), len(names))
	case len(names) > 0 && dir == ".":
		return "; pages at the top of the notebook: " + strings.Join(names, ", ")
	case len(names) > 0:
		return fmt.Sprintf("; pages in %s/: %s", dir, strings.Join(names, ", "))
	case len(folders) > 0:
		return fmt.Sprintf("; %s/ holds no pages; the notebook's folders: %s", dir, strings.Join(folders, ", "))
	}
	return "; the notebook has no pages yet"
}

// checkSize refuses text over MaxContentBytes before it is sent on.
func checkSize(arg, text string) error {
	if len(text) > MaxContentBytes {
		return fault.BadInputf(arg, "%s is %d bytes; one call writes at most %d (1 MB): split it into several calls", arg, len(text), MaxContentBytes)
	}
	return nil
}

func inSection(section string) string {
	if section == "" {
		return ""
	}
	return " under \"" + strings.TrimPrefix(section, "## ") + "\""
}

func ptr[T any](v T) *T { return &v }

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
	}{{"notebook", r.Results.Notebook}, {"daily", r.Results.Daily}, {"sessions", r.Results.Sessions}} {
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

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// isPage reports whether an indexed file is a notebook page on disk (not a
// transcript, not deleted).
func isPage(f memhost.FileInfo) bool {
	return strings.HasSuffix(f.Path, ".md") && f.State != indexer.StateDeleted
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// routedBy tells, for an automatic remember, who chose the page.
func routedBy(r memhost.RememberResponse) string {
	if r.Routing == "" {
		return ""
	}
	return " Chosen by the " + r.Routing + "."
}
