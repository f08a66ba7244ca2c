package main

import (
	"strings"

	"github.com/urfave/cli/v3"
)

// examples are the lines each command's help ends with, by the command's
// path below memhost. A command whose Description already has its own
// "Examples:" keeps them; TestEveryCommandHasExamples holds every command
// to having some.
var examples = map[string][]string{
	"init":                {"memhost init", "MEMHOST_HOME=/tmp/scratch memhost init"},
	"remember":            {`memhost remember "Sarah Chen's phone: +1 555 0100"`, `memhost remember --category lists --file groceries "oat milk"`},
	"daily-log":           {`memhost daily-log "Shipped the billing fix; Sarah reviews it Monday"`, `echo "Deployed v2.3 to staging" | memhost daily-log -`},
	"get":                 {"memhost get reference/contacts.md", "memhost get daily/2026-11-23.md --start-line 5 --lines 10"},
	"write":               {`memhost write knowledge/billing.md --section Decisions "Invoices are monthly."`, "memhost write lists/todo.md --replace - < todo.md"},
	"rm":                  {"memhost rm lists/old-ideas.md"},
	"recall":              {`memhost recall "how can I call Sarah?"`, `memhost recall --sources sessions,daily --max-results 5 "billing decision"`},
	"context":             {"memhost context", "memhost context --json"},
	"status":              {"memhost status", "memhost status --json"},
	"files":               {"memhost files", "memhost files --json"},
	"sync":                {"memhost sync"},
	"rebuild":             {"memhost rebuild"},
	"watch":               {"memhost watch"},
	"embed":               {"memhost embed"},
	"session":             {"memhost session list", "memhost session tokens chat-42"},
	"session list":        {"memhost session list", "memhost session list --json"},
	"session append":      {`memhost session append --session chat-42 --role user "remind me to call Sarah"`, `echo '{"role":"assistant","content":"Noted."}' | memhost session append --session chat-42 --role assistant -`, `memhost session append --session wa-ann --role user --channel whatsapp --source 919876543210 "running late"`},
	"session ingest":      {"memhost session ingest ~/.claude/projects/*/*.jsonl", "memhost session ingest --format memhost exports/chat.jsonl"},
	"session tokens":      {"memhost session tokens chat-42"},
	"session check":       {"memhost session check chat-42 --incoming-tokens 1200"},
	"session compact":     {`memhost session compact chat-42 --summary "We agreed to call Sarah on Monday."`, "memhost session compact chat-42 --summary - < summary.txt"},
	"conversation-search": {`memhost conversation-search "Sarah's phone"`, `memhost conversation-search --session chat-42 --since 2026-11-01 "invoice"`, `memhost conversation-search --channel whatsapp "late"`},
	"episodes":            {"memhost episodes", "memhost episodes --date 2026-11-23", "memhost episodes --since 2026-11-01 --until 2026-11-30"},
	"hook":                {"memhost hook session-start < hook-input.json", "memhost hook pre-compact < hook-input.json"},
	"eval":                {"memhost eval ../shared/bench/locomo-dev", "memhost eval --k 5,10 ../shared/bench/locomo-dev"},
	"models":              {"memhost models list", "memhost models pull ../shared/models/all-MiniLM-L6-v2-Q4_K_M.gguf"},
	"models list":         {"memhost models list"},
	"models pull":         {"memhost models pull ../shared/models/all-MiniLM-L6-v2-Q4_K_M.gguf", "memhost models pull all-MiniLM-L6-v2-Q4_K_M.gguf"},
	"models rm":           {"memhost models rm all-MiniLM-L6-v2-Q4_K_M.gguf"},
	"plugins":             {"memhost plugins list", "memhost plugins use hello"},
	"plugins list":        {"memhost plugins list"},
	"plugins use":         {"memhost plugins use local", "memhost plugins use ollama --set url=http://127.0.0.1:11434 --set model=nomic-embed-text"},
	"plugins status":      {"memhost plugins status"},
	"serve":               {"memhost serve", "memhost serve --detach --listen 127.0.0.1:0"},
	"serve status":        {"memhost serve status"},
	"serve stop":          {"memhost serve stop"},
	"health":              {"memhost health", "memhost health --repair"},
	"health history":      {"memhost health history", "memhost health history --limit 48 --json"},
	"git":                 {"memhost git init"},
	"fact":                {`memhost fact add sarah-chen employer "works at [[acme-corp]]"`, "memhost fact forget sarah-chen phone"},
}

// addExamples appends each command's examples to its Description, walking
// the tree below root.
func addExamples(root *cli.Command) {
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := strings.TrimSpace(prefix + " " + c.Name)
			if lines, ok := examples[path]; ok && !strings.Contains(c.Description, "Examples:") {
				var b strings.Builder
				b.WriteString(c.Description)
				if c.Description != "" {
					b.WriteString("\n\n")
				}
				b.WriteString("Examples:")
				for _, l := range lines {
					b.WriteString("\n  " + l)
				}
				c.Description = b.String()
			}
			walk(path, c.Commands)
		}
	}
	walk("", root.Commands)
}
