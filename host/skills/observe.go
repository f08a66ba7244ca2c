// Package skills is procedural memory: the tool sequences agents run,
// observed in the transcripts, and the skill pages
// (skills/learned/<slug>.md, markdown with YAML frontmatter) memhost
// proposes once a sequence was seen often enough. The transcripts and the
// pages are the truth: observations are read from the transcripts each
// time, and a page's status is whatever its frontmatter says.
package skills

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/memhost/memhost"
)

// observation is one task of a session: the tools called, in order,
// between two user messages.
type observation struct {
	session string
	at      string // the first call's time
	context string // the user message the task answered
	tools   []string
	failed  bool // a tool result said it failed
}

// minSteps is the fewest tools a task needs to be a sequence.
const minSteps = 2

// observe splits a session's turns into tasks and returns those of at
// least minSteps tools. A tool call is a tool_call turn (Claude Code
// transcripts: "tool call: NAME {input}") or a tool turn whose metadata
// names the tool ({"tool": "NAME"}); a task failed when a tool_result
// turn, or a tool turn's metadata, says error. Repeated calls of one tool
// in a row are one step.
func observe(session string, turns []memhost.Turn) []observation {
	var out []observation
	var cur observation
	flush := func() {
		if len(cur.tools) >= minSteps {
			out = append(out, cur)
		}
		cur = observation{session: session, context: cur.context}
	}
	cur.session = session
	for _, t := range turns {
		meta := metadata(t)
		switch {
		case t.Role == "user" && (t.Type == "message" || t.Type == ""):
			flush()
			cur.context = t.Content
		case t.Type == "tool_call" || t.Role == "tool" && meta.Tool != "":
			name := meta.Tool
			if name == "" {
				if f := strings.Fields(strings.TrimPrefix(t.Content, "tool call: ")); len(f) > 0 {
					name = f[0]
				}
			}
			if name = toolName(name); name == "" {
				continue
			}
			if len(cur.tools) == 0 {
				cur.at = t.Timestamp
			}
			if n := len(cur.tools); n == 0 || cur.tools[n-1] != name {
				cur.tools = append(cur.tools, name)
			}
			cur.failed = cur.failed || meta.Error
		case t.Type == "tool_result":
			cur.failed = cur.failed || meta.Error || failedResult(t.Content)
		}
	}
	flush()
	return out
}

// turnMeta is what a turn's metadata may say of a tool.
type turnMeta struct {
	Tool  string `json:"tool"`
	Error bool   `json:"error"`
}

func metadata(t memhost.Turn) turnMeta {
	var m turnMeta
	if len(t.Metadata) > 0 {
		json.Unmarshal(t.Metadata, &m) // not an object: no tool
	}
	return m
}

// failedResult reports whether a tool result's text says it failed:
// Claude Code's results of a failed tool start with "Error" (and of a
// refused one with the refusal).
func failedResult(content string) bool {
	c := strings.TrimSpace(strings.TrimPrefix(content, "tool result: "))
	return slices.ContainsFunc([]string{"Error", "error:", "<tool_use_error>"}, func(p string) bool { return strings.HasPrefix(c, p) })
}

// maxToolName bounds a tool's name as pages and the memory context show
// it, in characters.
const maxToolName = 100

// toolName is a tool's name on one line: control characters and runs of
// white space become one space (a newline in a name would start a
// heading of a skill page), at most maxToolName characters.
func toolName(name string) string {
	name = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, name)), " ")
	if r := []rune(name); len(r) > maxToolName {
		name = string(r[:maxToolName])
	}
	return name
}
