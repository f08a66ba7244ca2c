package memhost

import (
	"errors"
	"strings"
)

// LinksRequest asks for a page's links, or (Unresolved) for every link in
// the notebook that finds no page.
type LinksRequest struct {
	Path       string `json:"path,omitempty" jsonschema:"page path or wikilink name"`
	Unresolved bool   `json:"unresolved,omitempty" jsonschema:"also the notebook's broken links"`
}

// LinksResponse lists a page's out links and back links, with its
// frontmatter title, aliases and tags; or the unresolved links.
type LinksResponse struct {
	Path       string     `json:"path,omitempty"`
	Title      string     `json:"title,omitempty"`
	Aliases    []string   `json:"aliases,omitempty"`
	Tags       []string   `json:"tags,omitempty"`
	Out        []LinkInfo `json:"out"`
	Back       []LinkInfo `json:"back"`
	Unresolved []LinkInfo `json:"unresolved"` // null unless asked for
}

// LinkInfo is one link: a wikilink, or (Markdown) a markdown link to a
// vault file, whose Target is its path URL-decoded and Alias its text. In Out, Page is the page (or attachment) the
// link resolves to ("" when it resolves to none); in Back and Unresolved
// it is the page the link is in.
type LinkInfo struct {
	Page     string `json:"page"`
	Target   string `json:"target"` // as written
	Heading  string `json:"heading,omitempty"`
	Alias    string `json:"alias,omitempty"`
	Embed    bool   `json:"embed,omitempty"`
	Markdown bool   `json:"markdown,omitempty"` // [text](target), not [[target]]
	Line     int    `json:"line"`               // in the page holding the link
	Resolved bool   `json:"resolved"`
}

// MoveRequest renames a page.
type MoveRequest struct {
	From string `json:"from"`
	To   string `json:"to" jsonschema:"not an existing page"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// MoveResponse says what was renamed and which pages' links were updated.
type MoveResponse struct {
	From    string       `json:"from"`
	To      string       `json:"to"`
	Updated []LinkUpdate `json:"updated"`
	// Warnings are troubles after the write (a page whose links could not
	// be updated, the index not updated): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// LinkUpdate is a page whose links to a renamed page were rewritten.
type LinkUpdate struct {
	Path  string `json:"path"`
	Links int    `json:"links"`
}

// RollupRequest asks for the rollup of a week or a month.
type RollupRequest struct {
	Period string `json:"period"`                                                                          // week | month
	Date   string `json:"date,omitempty" jsonschema:"a day, 2026-W09 or 2026-02; default the current one"` // a day, 2026-W47 or 2026-11; "" is today's week or month
	// Summarize has the generator plugin write a summary section above
	// the logs (memory.generator); without one the rollup fails as
	// unavailable, writing nothing.
	Summarize bool `json:"summarize,omitempty"`
}

// RollupResponse says which page was written from which logs.
type RollupResponse struct {
	Path    string   `json:"path"`
	Period  string   `json:"period"` // 2026-W47, 2026-11
	From    string   `json:"from"`   // first day, YYYY-MM-DD
	To      string   `json:"to"`     // last day
	Logs    []string `json:"logs"`   // the daily logs rolled up
	Entries int      `json:"entries"`
	Created bool     `json:"created"`
	Changed bool     `json:"changed"`         // false: the page already held this rollup
	Summary bool     `json:"summary"`         // the generator wrote a summary (Summarize)
	Model   string   `json:"model,omitempty"` // the generator's model that wrote it
	// Kept: the page is a person's (edited since memhost wrote it, or not
	// a rollup memhost wrote) and was left as it is; Why says which.
	Kept bool   `json:"kept,omitempty"`
	Why  string `json:"why,omitempty"`
	// Warnings are troubles after the write (the index could not be
	// updated, or was rebuilt): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// PruneRequest archives (or deletes) the daily logs older than a number of
// days.
type PruneRequest struct {
	OlderThanDays int  `json:"olderThanDays"`
	Delete        bool `json:"delete,omitempty"`                                       // delete instead of archiving (archived logs too)
	DryRun        bool `json:"dryRun,omitempty" jsonschema:"only say what would move"` // say what would be done, change nothing
}

// PruneResponse says what was (or, dry, would be) archived or deleted.
type PruneResponse struct {
	Before   string       `json:"before"` // logs of days before this one are pruned
	Archived []PrunedLog  `json:"archived"`
	Deleted  []string     `json:"deleted"`
	DryRun   bool         `json:"dryRun,omitempty"`
	Warnings []string     `json:"warnings,omitempty"`
	Missing  []MissingLog `json:"missing,omitempty"` // set with the error when rollups are missing
	// Kept are the old logs left where they are because their rollup no
	// longer holds their text (a person edited it): pruning them would
	// lose it.
	Kept []KeptLog `json:"kept,omitempty"`
}

// KeptLog is a daily log prune left where it is, the rollup that names it
// and why.
type KeptLog struct {
	Log    string `json:"log"`
	Rollup string `json:"rollup"`
	Why    string `json:"why"`
}

// PrunedLog is a daily log moved into the archive.
type PrunedLog struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// MissingLog is a daily log that no rollup holds as it is now, and the
// rollup that would.
type MissingLog struct {
	Log    string `json:"log"`
	Rollup string `json:"rollup"` // the week's rollup page
	Why    string `json:"why"`    // "missing" or "out of date"
}

// RollupsMissingError is prune's refusal: the daily logs that no rollup
// holds as they are now, each with the week's rollup that would. It is
// ErrRollupsMissing to errors.Is; Prune returns it inside a *fault.Error
// (conflict, on olderThanDays), and so does the server's client.
type RollupsMissingError struct {
	Missing []MissingLog
}

func (e *RollupsMissingError) Error() string {
	return ErrRollupsMissing.Error() + ": nothing pruned; write these rollups first: " + strings.Join(e.Rollups(), ", ")
}

func (e *RollupsMissingError) Is(target error) bool { return target == ErrRollupsMissing }

// Rollups names the rollups to write, in order, each once with why:
// "daily/rollups/2026-W32.md (out of date)".
func (e *RollupsMissingError) Rollups() []string {
	var names []string
	for _, m := range e.Missing {
		if len(names) == 0 || !strings.HasPrefix(names[len(names)-1], m.Rollup+" ") {
			names = append(names, m.Rollup+" ("+m.Why+")")
		}
	}
	return names
}

// ErrRollupsMissing means prune found daily logs that no rollup holds as
// they are now: nothing was pruned.
var ErrRollupsMissing = errors.New("daily logs have no up-to-date rollup")
