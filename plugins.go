package memhost

// PluginsRequest asks for the installed plugins; it has no parameters.
type PluginsRequest struct{}

// UsePluginRequest makes Name the active provider, with its options
// updated by Set (an empty value removes an option).
type UsePluginRequest struct {
	Name string            `json:"name"`
	Set  map[string]string `json:"set,omitempty"`
}

// PluginStatusRequest asks for the active provider's state; it has no
// parameters.
type PluginStatusRequest struct{}

// PluginsResponse lists the installed plugins.
type PluginsResponse struct {
	Plugins    []PluginInfo `json:"plugins"`    // embeddings providers
	Generators []PluginInfo `json:"generators"` // text generators
	Warnings   []string     `json:"warnings"`
}

// UseResponse says what UsePlugin did.
type UseResponse struct {
	Plugin     string            `json:"plugin"`
	Options    map[string]string `json:"options"`
	Model      string            `json:"model"`
	Dimensions int               `json:"dimensions"`
	Status     string            `json:"status"`
	Message    string            `json:"message,omitempty"`
	Pending    int               `json:"pending"` // chunks to embed for this model
}
