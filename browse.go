package memhost

// PageRequest names a page to read whole, or its start.
type PageRequest struct {
	Path string `json:"path"`
	// MaxBytes, when > 0, bounds what is read: a longer page answers its
	// first MaxBytes bytes (cut back to a whole UTF-8 character) with
	// Truncated set and no Hash, so that the part can never be saved over
	// the whole. 0 reads the page whole.
	MaxBytes int64 `json:"maxBytes,omitempty"`
}

// PageResponse is a page as it is on disk, with the hash a SavePage of it
// names as its base.
type PageResponse struct {
	Path      string `json:"path"`
	Text      string `json:"text"`
	Hash      string `json:"hash"` // sha256 of the file, hex
	SizeBytes int64  `json:"sizeBytes"`
	Mtime     string `json:"mtime"`               // RFC 3339
	Truncated bool   `json:"truncated,omitempty"` // Text is the page's start (PageRequest.MaxBytes); Hash is ""
}

// SavePageRequest replaces a page's whole text, on the condition that the
// page is still as it was read: BaseHash is the hash Page gave (PageHash),
// or "" for a page that must not exist yet (a new page).
type SavePageRequest struct {
	Path     string `json:"path"`
	Text     string `json:"text"`
	BaseHash string `json:"baseHash"`
}

// SavePageResponse is the page as saved.
type SavePageResponse struct {
	Path    string `json:"path"`
	Hash    string `json:"hash"`
	Created bool   `json:"created"`
	// Redacted are the secrets replaced before the page was stored: the
	// editor shows the page as stored.
	Redacted []Redaction `json:"redacted,omitempty"`
	// Warnings are troubles after the write (the index could not be
	// updated): what was written is stored.
	Warnings []string `json:"warnings,omitempty"`
}

// PagesRequest asks for the notebook's folders and pages. Sizes and times
// cost a stat a page: they are given for the pages of Folder only, or of
// every folder with All.
type PagesRequest struct {
	Folder string `json:"folder,omitempty"`
	All    bool   `json:"all,omitempty"`
}

// PageEntry is one page of the notebook.
type PageEntry struct {
	Path      string `json:"path"` // relative to the notebook
	Title     string `json:"title"`
	SizeBytes int64  `json:"sizeBytes,omitempty"` // see PagesRequest
	Mtime     string `json:"mtime,omitempty"`     // RFC 3339; see PagesRequest
}

// FolderEntry is one folder of the notebook ("" is its top) with the pages
// right in it, sorted by name.
type FolderEntry struct {
	Path  string      `json:"path"`
	Pages []PageEntry `json:"pages"`
}

// PagesResponse lists every folder of the notebook, the standard ones
// (lists, reference, knowledge, daily) even when missing, then the others
// by name.
type PagesResponse struct {
	Folders []FolderEntry `json:"folders"`
}

// TranscriptRequest names a session whose transcript to read.
type TranscriptRequest struct {
	Session string `json:"session"`
}

// TranscriptResponse is a session's transcript: every entry that parses,
// in order (compaction entries included), and the pre-compaction flushes
// asked of the agent in it.
type TranscriptResponse struct {
	Session     string         `json:"session"`
	Path        string         `json:"path"` // sessions/ID.jsonl
	Turns       []Turn         `json:"turns"`
	Compactions int            `json:"compactions"`
	Flushes     []FlushReceipt `json:"flushes"`
}

// StorageRequest asks how much disk the home uses; it has no parameters.
type StorageRequest struct{}

// Usage is the files and bytes of one part of the home.
type Usage struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// StorageResponse is the disk use of each part of the home: the notebook
// but its daily logs, the daily logs, the transcripts, the index
// (brain/memory.db and its WAL) and the embeddings cache.
type StorageResponse struct {
	Notebook Usage `json:"notebook"`
	Daily    Usage `json:"daily"`
	Sessions Usage `json:"sessions"`
	Index    Usage `json:"index"`
	Cache    Usage `json:"cache"`
	Models   Usage `json:"models"`
}
