package memhost

// Lines is a 1-based inclusive line range.
type Lines struct {
	Start int `json:"start"`
	End   int `json:"end"`
}
