package api

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/knowledge"
)

// What each write changed: the table's third field, one function per
// write. The host publishes the Change once the write returns (see
// host.Host.Subscribe): federation commits its Paths, Removed and Files
// with Note as the message; the server's event stream and MCP's resource
// subscribers hear of it. A Change naming nothing (no path, no file, no
// note) is not published: the write changed nothing.

func initChanged(memhost.InitRequest, memhost.InitResponse) memhost.Change {
	return memhost.Change{Note: "init"} // config.yaml, which is not shared
}

func rememberChanged(_ memhost.RememberRequest, r memhost.RememberResponse) memhost.Change {
	c := memhost.Change{Note: "remember: " + section(r.Path, r.Section)}
	if !r.Duplicate {
		c.Paths = memhost.Paths(r.Path)
	}
	return c
}

func dailyLogChanged(_ memhost.DailyLogRequest, r memhost.DailyLogResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: "daily-log: " + section(r.Path, r.Heading)}
}

func writeChanged(_ memhost.WriteRequest, r memhost.WriteResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: "write: " + section(r.Path, r.Section)}
}

func removeChanged(_ memhost.RemoveRequest, r memhost.RemoveResponse) memhost.Change {
	return memhost.Change{Removed: memhost.Paths(r.Path), Note: "rm: " + r.Path}
}

func savePageChanged(_ memhost.SavePageRequest, r memhost.SavePageResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: "page/save: " + r.Path}
}

func sessionAppendChanged(_ memhost.SessionAppendRequest, r memhost.SessionAppendResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: fmt.Sprintf("session/append: %s turn %s", r.Path, r.Turn.ID)}
}

func ingestChanged(_ memhost.IngestRequest, r memhost.IngestResponse) memhost.Change {
	var c memhost.Change
	var names []string
	for _, f := range r.Files {
		if f.Added > 0 {
			names = append(names, fmt.Sprintf("%s (+%d turns)", f.Session, f.Added))
			c.Paths = append(c.Paths, memhost.SessionPath(f.Session))
		}
	}
	if len(names) > 0 {
		c.Note = "session/ingest: " + strings.Join(names, ", ")
	}
	return c
}

func sessionCompactChanged(_ memhost.SessionCompactRequest, r memhost.SessionCompactResponse) memhost.Change {
	if r.Session == "" {
		return memhost.Change{}
	}
	return memhost.Change{Paths: []string{memhost.SessionPath(r.Session)}, Note: "session/compact: " + r.Session}
}

// hookChanged: a hook's writes are its ingest's and its flush's, each
// published by its own operation.
func hookChanged(memhost.HookRequest, memhost.HookResponse) memhost.Change { return memhost.Change{} }

func episodesChanged(_ memhost.EpisodesRequest, r memhost.EpisodesResponse) memhost.Change {
	var c memhost.Change
	for _, d := range r.Days {
		if d.State == memhost.EpisodeWritten {
			c.Paths = append(c.Paths, d.Path)
		}
	}
	if len(c.Paths) > 0 {
		c.Note = "episodes: " + strings.Join(c.Paths, ", ")
	}
	return c
}

// usePluginChanged, pullModelChanged, removeModelChanged: config.yaml and
// models/ are this machine's, not shared: a note, no file.
func usePluginChanged(_ memhost.UsePluginRequest, r memhost.UseResponse) memhost.Change {
	return memhost.Change{Note: "plugins/use: " + r.Plugin}
}

func pullModelChanged(_ memhost.PullModelRequest, r memhost.PullResponse) memhost.Change {
	if r.Already || r.Name == "" {
		return memhost.Change{}
	}
	return memhost.Change{Note: "models/pull: " + r.Name}
}

func removeModelChanged(_ memhost.RemoveModelRequest, r memhost.RemoveModelResponse) memhost.Change {
	return memhost.Change{Note: "models/rm: " + r.Removed}
}

func moveChanged(_ memhost.MoveRequest, r memhost.MoveResponse) memhost.Change {
	c := memhost.Change{Paths: memhost.Paths(r.To), Removed: memhost.Paths(r.From), Note: fmt.Sprintf("mv: %s -> %s", r.From, r.To)}
	for _, u := range r.Updated {
		c.Paths = append(c.Paths, u.Path)
	}
	return c
}

func rollupChanged(_ memhost.RollupRequest, r memhost.RollupResponse) memhost.Change {
	c := memhost.Change{Note: "rollup: " + r.Path}
	if r.Changed {
		c.Paths = memhost.Paths(r.Path)
	}
	return c
}

func pruneChanged(q memhost.PruneRequest, r memhost.PruneResponse) memhost.Change {
	var c memhost.Change
	if q.DryRun {
		return c
	}
	for _, a := range r.Archived {
		c.Paths = append(c.Paths, a.To)
		c.Removed = append(c.Removed, a.From)
	}
	c.Removed = append(c.Removed, r.Deleted...)
	c.Note = fmt.Sprintf("prune: %d archived, %d deleted (before %s)", len(r.Archived), len(r.Deleted), r.Before)
	return c
}

func factAddChanged(_ knowledge.FactAddRequest, r knowledge.FactAddResponse) memhost.Change {
	c := memhost.Change{Note: fmt.Sprintf("fact/add: %s %s", r.Path, r.Fact.ID)}
	if !r.Stale {
		c.Paths = memhost.Paths(r.Path)
	}
	return c
}

func factForgetChanged(_ knowledge.FactForgetRequest, r knowledge.FactForgetResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Path), Note: fmt.Sprintf("fact/forget: %s (%d)", r.Path, len(r.Forgotten))}
}

// consolidateChanged: a run that applied nothing wrote nothing.
func consolidateChanged(_ knowledge.ConsolidateRequest, r knowledge.ConsolidateResponse) memhost.Change {
	if len(r.Applied) == 0 {
		return memhost.Change{}
	}
	return memhost.Change{Paths: r.Written, Note: fmt.Sprintf("consolidate: %d facts from %d episodes", len(r.Applied), r.Episodes)}
}

func skillLearnChanged(_ memhost.SkillLearnRequest, r memhost.SkillsResponse) memhost.Change {
	if len(r.Written) == 0 {
		return memhost.Change{}
	}
	return memhost.Change{Paths: r.Written, Note: "skills/learn: " + strings.Join(r.Written, ", ")}
}

func skillReviewChanged(q memhost.SkillReviewRequest, r memhost.SkillReviewResponse) memhost.Change {
	return memhost.Change{Paths: memhost.Paths(r.Skill.Path), Note: "skills/review: " + q.Slug + " " + q.Status}
}

// gitInitChanged: the repository and config.yaml's federation keys are
// the machine's; the first sync publishes what it merged (git/sync).
func gitInitChanged(_ memhost.GitInitRequest, r memhost.GitInitResponse) memhost.Change {
	return memhost.Change{Note: "git/init: " + r.Home}
}

// fedSyncChanged: what the merge brought or deleted, published even when
// the push after it failed (the merge stands). Federation commits none of
// it: the merge is its own commit.
func fedSyncChanged(_ memhost.FedSyncRequest, r memhost.FedSyncResponse) memhost.Change {
	var c memhost.Change
	for _, p := range r.Paths {
		if slices.Contains(r.Gone, p) {
			c.Removed = append(c.Removed, p)
		} else {
			c.Paths = append(c.Paths, p)
		}
	}
	if len(r.Paths) > 0 {
		c.Note = fmt.Sprintf("git/sync: %d files merged", len(r.Paths))
	}
	return c
}

func importChanged(_ memhost.ImportRequest, r memhost.ImportResponse) memhost.Change {
	if len(r.Changed)+len(r.ChangedFiles) == 0 {
		return memhost.Change{}
	}
	return memhost.Change{Paths: r.Changed, Files: r.ChangedFiles,
		Note: fmt.Sprintf("import: %s (%d added, %d merged)", filepath.Base(r.Path), len(r.Added), len(r.Merged))}
}

func secretsRedactChanged(_ memhost.SecretsRedactRequest, r memhost.SecretsRedactResponse) memhost.Change {
	if len(r.Files) == 0 {
		return memhost.Change{}
	}
	return memhost.Change{Paths: r.Changed, Note: fmt.Sprintf("secrets/redact: %d files", len(r.Files))}
}

// section names a page's section in a change's note: "reference/x.md ## Sarah".
func section(path, heading string) string {
	if s := strings.TrimSpace(strings.TrimLeft(heading, "#")); s != "" {
		return path + " ## " + s
	}
	return path
}
