package corecmd

import (
	"github.com/urfave/cli/v3"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/cmd/memhost-core/internal/notecmd"
)

// Commands are the core commands, in the order help lists them.
func Commands(a *cmdapp.App) []*cli.Command {
	return commands(cmds{a})
}

func commands(a cmds) []*cli.Command {
	return []*cli.Command{
		{
			Name:      "init",
			Usage:     "create the home with its folders and a commented config.yaml (safe to run again)",
			ArgsUsage: " ",
			Action:    a.init,
		},
		{
			Name:      "remember",
			Usage:     "store a fact, preference, contact or list item on the right page",
			ArgsUsage: "TEXT|-",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "category", Usage: "lists, reference or knowledge (default: chosen from the text)"},
				&cli.StringFlag{Name: "file", Usage: "page name within the category, e.g. contacts"},
				&cli.StringFlag{Name: "section", Usage: "H2 section to add under (created when missing)"},
				&cli.BoolFlag{Name: "auto", Usage: "the generator (memory.generator.plugin) chooses category, page, section and tags; the rules route when it cannot"},
			},
			Action: a.remember,
		},
		{
			Name:      "daily-log",
			Usage:     "append an entry to today's daily log",
			ArgsUsage: "TEXT|-",
			Action:    a.dailyLog,
		},
		{
			Name:      "get",
			Usage:     "print a page or a range of its lines",
			ArgsUsage: "PATH",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "start-line", Usage: "first line to print (1-based)"},
				&cli.IntFlag{Name: "lines", Usage: "number of lines to print (default: to the end)"},
			},
			Action: a.get,
		},
		{
			Name:      "write",
			Usage:     "append to a page or an H2 section, or replace the section (the page without --section)",
			ArgsUsage: "PATH TEXT|-",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "section", Usage: "H2 section to write to (created when missing)"},
				&cli.BoolFlag{Name: "replace", Usage: "replace the section, or the whole page without --section"},
			},
			Action: a.write,
		},
		{
			Name:      "rm",
			Usage:     "delete a page",
			ArgsUsage: "PATH",
			Action:    a.rm,
		},
		{
			Name:      "recall",
			Usage:     "search the notebook; results grouped by source, notebook first",
			ArgsUsage: "QUERY",
			Flags: []cli.Flag{
				&cli.IntFlag{Name: "max-results", Usage: "most results in all (default memory.search.maxResults, 15)", HideDefault: true},
				&cli.FloatFlag{Name: "min-score", Usage: "drop results below this score, 0..1 (default memory.search.minScore, 0.25)", HideDefault: true},
				&cli.StringFlag{Name: "sources", Usage: "comma-separated groups to search: notebook,daily,sessions (default notebook,daily)"},
				&cli.StringSliceFlag{Name: "tag", Usage: "only pages with this tag, in frontmatter or as #tag (repeatable: every one; project also matches project/alpha)"},
				&cli.StringFlag{Name: "path", Usage: "only pages under this folder (knowledge/) or this page"},
			},
			Action: a.recall,
		},
		{
			Name:      "context",
			Usage:     "print the block for an agent's system prompt; --query: the memory context of every tier within a token budget; --session: a session's working memory",
			ArgsUsage: " ",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "query", Usage: "assemble the memory context for this text"},
				&cli.StringFlag{Name: "session", Usage: "a session's working memory: the block, the memory for --query (default its last user turn), its summary and recent turns"},
				&cli.IntFlag{Name: "budget", Usage: "tokens of the memory context (default memory.context.budget, 5000)", HideDefault: true},
				&cli.StringFlag{Name: "tiers", Usage: "comma-separated tiers to search: facts,episodes,skills,notebook (default all)"},
				&cli.IntFlag{Name: "per-tier", Usage: "items a tier may give (default memory.context.perTier, 20)", HideDefault: true},
				&cli.FloatFlag{Name: "min-score", Usage: "drop memories below this score, 0..1 (default memory.search.minScore, 0.25)", HideDefault: true},
				&cli.StringFlag{Name: "half-life", Usage: "weigh recent memories higher: a score halves with each half-life of age, e.g. 30d (default off)"},
				&cli.StringFlag{Name: "channel", Usage: "only episodes from this channel"},
				&cli.StringFlag{Name: "source", Usage: "only episodes from this chat or contact (with --channel)"},
				&cli.StringFlag{Name: "entity", Usage: "only facts of this entity (its slug)"},
			},
			Action: a.context,
		},
		{Name: "status", Usage: "show the index: files, chunks, last sync, size, search mode", ArgsUsage: " ", Action: a.status},
		{Name: "files", Usage: "list pages with their hash, chunk count and whether the index is stale", ArgsUsage: " ", Action: a.files},
		{Name: "sync", Usage: "index new and edited pages, drop deleted ones", ArgsUsage: " ", Action: a.sync, Flags: []cli.Flag{notecmd.SyncRemoteFlag}},
		{Name: "rebuild", Usage: "build a fresh index beside the old one and swap it in", ArgsUsage: " ", Action: a.rebuild},
		{Name: "watch", Usage: "watch the notebook and index changes as they happen (until Ctrl-C)", ArgsUsage: " ", Action: a.watch},
		{Name: "embed", Usage: "embed every chunk still waiting for a vector of the active provider", ArgsUsage: " ", Action: a.embed},
		{
			Name:  "session",
			Usage: "conversation transcripts: list, append, ingest, tokens, check, compact",
			Commands: []*cli.Command{
				{Name: "list", Usage: "every session with its turn count and first and last times, most recent first", ArgsUsage: " ", Action: a.sessionList},
				{
					Name:      "append",
					Usage:     "append one turn to sessions/ID.jsonl (flushed to disk, indexed before returning)",
					ArgsUsage: "TEXT|-",
					Flags: []cli.Flag{
						&cli.StringFlag{Name: "session", Usage: "session id (letters, digits, . _ -)", Required: true},
						&cli.StringFlag{Name: "role", Usage: "user, assistant, system or tool", Required: true},
						&cli.StringFlag{Name: "meta", Usage: "a JSON object kept with the turn"},
						&cli.StringFlag{Name: "channel", Usage: "where the turn came from: whatsapp, telegram, cli, ..."},
						&cli.StringFlag{Name: "source", Usage: "the chat or contact in the channel (needs --channel)"},
						&cli.BoolFlag{Name: "end", Usage: "the turn ends the session: write its episode logs (episodes/YYYY-MM-DD.md)"},
						&cli.BoolFlag{Name: "private", Usage: "the session is private: searchable here, never committed, pushed or exported"},
					},
					Action: a.sessionAppend,
				},
				{
					Name:      "ingest",
					Usage:     "import transcripts (memhost's JSONL or Claude Code's); importing again adds only new turns",
					ArgsUsage: "PATH...",
					Flags:     []cli.Flag{&cli.StringFlag{Name: "format", Value: "auto", Usage: "auto, memhost or claude-code"}},
					Action:    a.sessionIngest,
				},
				{Name: "tokens", Usage: "estimate a session's working context (since its last compaction)", ArgsUsage: "ID", Action: a.sessionTokens},
				{
					Name:      "check",
					Usage:     "say whether a flush or a compaction is due, counting the incoming message; records the flush",
					ArgsUsage: "ID",
					Flags:     []cli.Flag{&cli.IntFlag{Name: "incoming-tokens", Usage: "tokens of the message about to be added"}},
					Action:    a.sessionCheck,
				},
				{
					Name:      "compact",
					Usage:     "append a compaction entry: SUMMARY replaces older turns in the working context (nothing is deleted)",
					ArgsUsage: "ID",
					Flags:     []cli.Flag{&cli.StringFlag{Name: "summary", Usage: "the summary, or - for stdin"}, &cli.BoolFlag{Name: "summarize", Usage: "the generator (memory.generator.plugin) writes the summary"}, &cli.BoolFlag{Name: "facts", Usage: "then extract the facts of the conversations not yet consolidated (consolidate), with the generator"}},
					Action:    a.sessionCompact,
				},
			},
		},
		{
			Name:      "conversation-search",
			Usage:     "search conversation transcripts; each result names the session, turn, role and time",
			ArgsUsage: "QUERY",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "session", Usage: "only this session"},
				&cli.StringFlag{Name: "since", Usage: "only turns at or after this date (YYYY-MM-DD) or time (RFC 3339)"},
				&cli.StringFlag{Name: "until", Usage: "only turns at or before this date or time"},
				&cli.StringFlag{Name: "channel", Usage: "only turns from this channel (session append --channel)"},
				&cli.StringFlag{Name: "source", Usage: "only turns from this chat or contact (with --channel)"},
				&cli.IntFlag{Name: "max-results", Usage: "most results (default 10)", HideDefault: true},
				&cli.StringFlag{Name: "as-of", Usage: "the date (YYYY-MM-DD) or time (RFC 3339) that relative dates in the query count from: last Saturday, two weeks ago, in March (default now)"},
			},
			Action: a.conversationSearch,
		},
		{
			Name:      "hook",
			Usage:     "answer an agent runtime hook (Claude Code): reads the hook's JSON on stdin, prints the answer",
			ArgsUsage: "session-start|prompt|pre-compact|session-end|stop",
			Action:    a.hook,
		},
		{
			Name:      "episodes",
			Usage:     "write the episode logs: a page a day of the conversations (episodes/YYYY-MM-DD.md), keeping pages edited by hand",
			ArgsUsage: " ",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "date", Usage: "the day to write, YYYY-MM-DD (default today)"},
				&cli.StringFlag{Name: "since", Usage: "the first of a range of days, YYYY-MM-DD (with --until)"},
				&cli.StringFlag{Name: "until", Usage: "the last of the range, YYYY-MM-DD"},
			},
			Action: a.episodes,
		},
		{
			Name:      "eval",
			Usage:     "measure conversation retrieval on an eval set: a folder (shared/bench layout: mean evidence recall@k) or a LongMemEval JSON file (session and turn recall@k, NDCG, by question type)",
			ArgsUsage: "DIR|FILE",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "k", Value: "5,10,25,50", Usage: "cut-offs, in turns (a folder)"},
				&cli.BoolFlag{Name: "mixed", Usage: "also ask each question in a home crowded with the other conversations' turns as daily-log pages; figures side by side (a folder)"},
				&cli.IntFlag{Name: "sample", Usage: "ask this many questions drawn at random (a LongMemEval file)", HideDefault: true},
				&cli.IntFlag{Name: "seed", Usage: "the draw of --sample: the same seed asks the same questions", HideDefault: true},
				&cli.StringFlag{Name: "types", Usage: "only questions of these types, e.g. multi-session,temporal-reasoning (a LongMemEval file)"},
				&cli.StringFlag{Name: "cache", Usage: "keep the embedding cache the questions' homes share in this folder, for the next run (a LongMemEval file; default a temporary one)"},
			},
			Action: a.eval,
		},
		{
			Name:  "models",
			Usage: "list, download and remove embedding models (GGUF) for the local provider",
			Commands: []*cli.Command{
				{Name: "list", Usage: "models in the models folder, with interrupted downloads", ArgsUsage: " ", Action: a.modelsList},
				{
					Name:      "pull",
					Usage:     "download a model (resumes an interrupted download); NAME is the default model's name, or give a URL",
					ArgsUsage: "NAME|URL",
					Flags:     []cli.Flag{&cli.StringFlag{Name: "sha256", Usage: "expected SHA-256 of the file (hex)"}},
					Action:    a.modelsPull,
				},
				{Name: "rm", Usage: "delete a model", ArgsUsage: "NAME", Action: a.modelsRm},
			},
		},
		{
			Name:  "plugins",
			Usage: "list, choose and inspect embeddings provider plugins",
			Commands: []*cli.Command{
				{Name: "list", Usage: "installed plugins with their version, model, dimensions and status", ArgsUsage: " ", Action: a.pluginsList},
				{
					Name:      "use",
					Usage:     "make NAME the embeddings provider (writes config.yaml); re-embeds in the background",
					ArgsUsage: "NAME",
					Flags: []cli.Flag{
						&cli.StringSliceFlag{Name: "set", Usage: "plugin option key=value (repeatable; key= removes it)"},
					},
					Action: a.pluginsUse,
				},
				{Name: "status", Usage: "the active provider, its state, and the search mode", ArgsUsage: " ", Action: a.pluginsStatus},
			},
		},
	}
}
