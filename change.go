package memhost

// Change is what one successful write changed, published on the host's
// change bus (host.Host.Subscribe): federation commits exactly Paths with
// Note as the message, MCP tells resource subscribers, the server's event
// stream tells the dashboard. Paths and Removed are index paths, as the API
// reports them ("reference/contacts.md", "daily/2026-11-28.md",
// "sessions/abc.jsonl"); a write that changed nothing publishes nothing.
type Change struct {
	Op      string   `json:"op"`                // the operation: "remember", "mv", "prune", ...
	Paths   []string `json:"paths,omitempty"`   // written or created
	Removed []string `json:"removed,omitempty"` // deleted or moved away
	// Files are other files of the home the write changed, relative to
	// the home ("config.yaml", "sessions/.receipts.jsonl").
	Files []string `json:"files,omitempty"`
	// Note says in words what changed, for a commit message:
	// "remember: reference/contacts.md ## Sarah Chen".
	Note string `json:"note,omitempty"`
	// Result is the operation's response, for the event stream's
	// "write" event (its JSON shape is part of the HTTP API).
	Result any `json:"-"`
}

// Paths lists the paths given but the empty ones, for a Change: a write
// whose response names no path changed none.
func Paths(ps ...string) []string {
	var out []string
	for _, p := range ps {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
