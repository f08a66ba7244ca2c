package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
)

// stored is one thing a session's tool call stored, for the
// pre-compaction-flush prompt.
type stored struct {
	Tool    string
	Path    string
	Section string
	Lines   memhost.Lines
	Text    string
}

// Bounds of what is kept of a session's writes.
const (
	maxStored   = 50 // writes per session (the latest)
	maxSessions = 64 // sessions remembered (an arbitrary one is forgotten past it)
)

// wrote records a successful write of a session, for its
// pre-compaction-flush prompt.
func (s *srv) wrote(req *mcpsdk.CallToolRequest, st stored) {
	id := sessionID(req.Session)
	s.mu.Lock()
	if _, ok := s.stored[id]; !ok && len(s.stored) >= maxSessions {
		for k := range s.stored {
			delete(s.stored, k)
			break
		}
	}
	list := append(s.stored[id], st)
	if len(list) > maxStored {
		list = list[len(list)-maxStored:]
	}
	s.stored[id] = list
	s.mu.Unlock()
}

func sessionID(ss *mcpsdk.ServerSession) string {
	if ss == nil {
		return ""
	}
	return ss.ID() // "" over stdio: one session per process
}

func (s *srv) addPrompts() {
	s.sdk.AddPrompt(&mcpsdk.Prompt{
		Name:  "pre-compaction-flush",
		Title: "Store memories before compaction",
		Description: "Ask the model to write its durable memories to the notebook or daily log before the context is compacted: " +
			"the configured flush text (memory.compaction.flushPrompt), and what this session has already stored through memhost's tools, so it is not stored twice.",
	}, s.flushPrompt)
	s.sdk.AddPrompt(&mcpsdk.Prompt{
		Name:        "session-start",
		Title:       "Memory context",
		Description: "The memory block to start a session with: every reference page and the recent daily logs (as the context tool returns it).",
	}, s.sessionStart)
}

// flushPrompt is the configured flush text followed by the writes this
// session made through the write tools (the latest 50), or a line saying
// there were none.
func (s *srv) flushPrompt(_ context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(s.opts.FlushPrompt()))
	s.mu.Lock()
	list := append([]stored(nil), s.stored[sessionID(req.Session)]...)
	s.mu.Unlock()
	if len(list) == 0 {
		b.WriteString("\n\nNothing has been stored through memhost in this session yet.")
	} else {
		b.WriteString("\n\nAlready stored in this session (do not store these again):")
		for _, st := range list {
			fmt.Fprintf(&b, "\n- %s → %s", st.Tool, st.Path)
			if st.Section != "" {
				fmt.Fprintf(&b, " (%s)", strings.TrimPrefix(st.Section, "## "))
			}
			fmt.Fprintf(&b, " lines %d-%d: %s", st.Lines.Start, st.Lines.End, clip(oneLine(st.Text), 160))
		}
	}
	return &mcpsdk.GetPromptResult{
		Description: "Store durable memories before compaction",
		Messages:    []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: b.String()}}},
	}, nil
}

// sessionStart is host.Context's block.
func (s *srv) sessionStart(ctx context.Context, _ *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
	c, err := s.api.Context(ctx, memhost.ContextRequest{})
	if err != nil {
		return nil, err
	}
	return &mcpsdk.GetPromptResult{
		Description: "memhost memory: reference pages and recent daily logs",
		Messages:    []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: c.Text}}},
	}, nil
}

// clip shortens s to at most n runes, marking the cut.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
