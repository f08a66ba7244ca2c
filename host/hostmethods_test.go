package host

import (
	"reflect"
	"testing"

	"github.com/memhost/memhost/api"
)

// hostMethods are the exported methods of *Host that are not operations
// of the table, each with what it is. TestHostMethods fails on a method
// that is neither and on one listed here that is gone, so the list only
// shrinks: the services' own methods are promoted onto Host by embedding
// (the Host's kernel calls them), and the dashboard's reads run outside
// the table.
var hostMethods = map[string]string{
	// Lifecycle.
	"Close":  "lifecycle: closes the home",
	"Watch":  "lifecycle: runs the watcher and the supervisor's loops (memhost serve, memhost watch)",
	"Derive": "lifecycle: opens another home with this one's plugins, logs and clock (the eval)",
	// The core's.
	"Config":        "core: the configuration in force",
	"ConfigError":   "core: why config.yaml cannot be used now",
	"RecheckConfig": "core: reads config.yaml again when it changed",
	"Home":          "core: the home folder",
	"NotebookDir":   "core: the notebook folder",
	"Now":           "core: the Host's clock",
	"Subscribe":     "core: the change bus",
	"FlushCommits":  "core: commits federation's pending changes now",
	// The dashboard's, outside the table.
	"Page":              "dashboard: a page with its frontmatter and links",
	"Pages":             "dashboard: the notebook's pages",
	"SavePage":          "dashboard: the editor's save",
	"Storage":           "dashboard: the home's sizes",
	"Transcript":        "dashboard: a session's turns",
	"IndexSummary":      "dashboard: the index's figures",
	"FederationSummary": "dashboard and status: federation's state",
	// Promoted from embedded services: the kernel's and the supervisor's.
	"CheckContext":       "promoted: the context request's check (recall)",
	"ConsolidationState": "promoted: consolidation's status (semantic)",
	"ContextFacts":       "promoted: the facts tier of the memory context (semantic)",
	"DayStatus":          "promoted: a day's episode log status (episodes)",
	"Edited":             "promoted: commits the watcher's edits (federated)",
	"FederationCheck":    "promoted: health's federation check (federated)",
	"ForgetKept":         "promoted: drops the vault's kept unresolved links and attachments, for benchmarks (vault)",
	"LinksCheck":         "promoted: health's links check (vault)",
	"MemoryContext":      "promoted: the memory context's assembly (recall)",
	"Note":               "promoted: federation's change subscriber (federated)",
	"OpenFederation":     "promoted: starts federation for a repository home (federated)",
	"CloseFederation":    "promoted: stops it (federated)",
	"RunLoop":            "promoted: federation's sync loop (federated)",
	"RunScheduled":       "promoted: one scheduled health check (health)",
	"SearchFacts":        "promoted: the facts search of recall (semantic)",
	"SessionEnded":       "promoted: the episode log of an ended session (episodes)",
	"SetGenerator":       "promoted: an in-process text model for consolidation, for programs embedding the host and tests (semantic)",
	"UnresolvedLinks":    "promoted: the vault's unresolved links (vault)",
	"Working":            "promoted: a session's working memory (conversations)",
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
