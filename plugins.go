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
