package memhost

// Block is the text an agent puts in its system prompt, and the pages in it.
type ContextResponse struct {
	Text  string        `json:"text"`
	Files []ContextFile `json:"files"`
}

// File is one page in the block.
type ContextFile struct {
	Path      string `json:"path"`
	Chars     int    `json:"chars"` // characters included
	Truncated bool   `json:"truncated"`
	Omitted   bool   `json:"omitted"` // left out: the total limit was reached
}
