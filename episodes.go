package memhost

// EpisodesRequest regenerates the episode logs, one notebook page a day
// (memory.episodes.folder/YYYY-MM-DD.md): of Date, or of each day from
// Since to Until (both YYYY-MM-DD, at most 366 days); none given: today.
type EpisodesRequest struct {
	Date  string `json:"date,omitempty" jsonschema:"YYYY-MM-DD; default today"`
	Since string `json:"since,omitempty" jsonschema:"a range of days instead"`
	Until string `json:"until,omitempty"`
}

// EpisodesResponse says what became of each day's page, in date order.
type EpisodesResponse struct {
	Days     []EpisodeDay `json:"days"`
	Warnings []string     `json:"warnings,omitempty"` // the pages are written; the index could not be updated
}

// EpisodeWritten is the State of a day whose page a request wrote.
const EpisodeWritten = "written"

// EpisodeDay is one day's episode log. State is written, unchanged, kept
// (a person edited the page: left as it is) or empty (no conversation
// that day, no page).
type EpisodeDay struct {
	Date     string `json:"date"`
	Path     string `json:"path"`
	State    string `json:"state"`
	Sessions int    `json:"sessions"`
	Messages int    `json:"messages"`
}
