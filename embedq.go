package memhost

// PluginInfo describes an installed plugin.
type PluginInfo struct {
	Kind       string  `json:"kind"` // embeddings or generator
	Name       string  `json:"name"`
	Path       string  `json:"path"`
	SHA256     string  `json:"sha256"`
	Version    string  `json:"version"`
	Model      string  `json:"model"`
	Dimensions int     `json:"dimensions"`
	Status     string  `json:"status"`
	Progress   float64 `json:"progress,omitempty"`
	Message    string  `json:"message,omitempty"`
	Active     bool    `json:"active"`
}

// ProviderStatus is the active provider's state, as its plugin reports it.
type ProviderStatus struct {
	Plugin     string  `json:"plugin,omitempty"`
	Path       string  `json:"path,omitempty"`
	SHA256     string  `json:"sha256,omitempty"`
	Version    string  `json:"version,omitempty"`
	Model      string  `json:"model,omitempty"`
	Dimensions int     `json:"dimensions,omitempty"`
	State      string  `json:"state"`
	Progress   float64 `json:"progress"`
	Message    string  `json:"message,omitempty"`
	PingMs     float64 `json:"pingMs,omitempty"` // go-plugin health check round trip
	PingError  string  `json:"pingError,omitempty"`
}

// Result reports a run of the queue.
type EmbedResult struct {
	Provider   string  `json:"provider"`
	Model      string  `json:"model"`
	Embedded   int     `json:"embedded"`       // chunks given vectors in this run
	FromCache  int     `json:"fromCache"`      // of those, vectors taken from the cache
	Pending    int     `json:"pending"`        // chunks still without a vector, but dead ones
	Dead       int     `json:"dead,omitempty"` // chunks whose embedding failed too often (see Queue.RetryDead)
	Busy       bool    `json:"busy"`           // another process is embedding; this run did nothing
	DurationMs float64 `json:"durationMs"`
}
