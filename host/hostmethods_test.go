package host

import (
	"reflect"
	"testing"

	"github.com/memhost/memhost/api"
)

// hostMethods are the exported methods of *Host that are not operations
// of the table, each with what it is. TestHostMethods fails on a method
// that is neither and on one listed here that is gone, so the list only
// shrinks. The services are a field of the Host (impl), not embedded, so
// that their other methods (loops, hooks, the kernel's) are not the
// Host's.
var hostMethods = map[string]string{
	// Lifecycle.
	"Close":  "lifecycle: closes the home",
	"Watch":  "lifecycle: runs the watcher and the supervisor's loops (memhost serve, memhost watch)",
	"Derive": "lifecycle: opens another home with this one's plugins, logs and clock (the eval)",
	// The core's.
	"Config":            "core: the configuration in force",
	"ConfigError":       "core: why config.yaml cannot be used now",
	"RecheckConfig":     "core: reads config.yaml again when it changed",
	"Home":              "core: the home folder",
	"NotebookDir":       "core: the notebook folder",
	"Now":               "core: the Host's clock",
	"Subscribe":         "core: the change bus",
	"FederationSummary": "core: federation's state alone, for the dashboard's sync card beside a quick status",
}

// TestHostMethods: every exported method of *Host is an operation of the
// table or listed in hostMethods.
func TestHostMethods(t *testing.T) {
	t.Parallel()
	ops := map[string]bool{}
	at := reflect.TypeFor[api.API]()
	for i := range at.NumMethod() {
		ops[at.Method(i).Name] = true
	}
	ht := reflect.TypeFor[*Host]()
	seen := map[string]bool{}
	for i := range ht.NumMethod() {
		m := ht.Method(i).Name
		switch {
		case ops[m]:
		case hostMethods[m] != "":
			seen[m] = true
		default:
			t.Errorf("(*Host).%s is not an operation of the table (api/ops.go); make it one, unexport it, or say in hostMethods what it is", m)
		}
	}
	for m := range hostMethods {
		if !seen[m] {
			t.Errorf("hostMethods lists %s, which *Host no longer has: drop it", m)
		}
	}
}
