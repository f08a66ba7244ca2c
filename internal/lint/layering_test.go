package lint

import (
	"go/parser"
	"go/token"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// layers are the rows of the package table in docs/design-notes.md
// ("Packages and what they may import"): a package's row is the longest
// prefix that names it, and it may import the packages of ours its row
// lists (a trailing "/" allows every package under a folder). Every
// package may import internal/ (the repository's utilities: files,
// sockets, the clock) but a package whose row says "nothing"; the root
// package's rows allow knowledge and fault too: the semantic tier's part
// of the domain types, and the one error type.
var layers = []struct {
	prefix  string   // "cmd/" is every package under cmd
	may     []string // "" is the root package
	nothing bool     // not even internal/
}{
	{prefix: "api", may: []string{""}},
	{prefix: "api/apitest", may: []string{"", "api"}},
	{prefix: "api/internal/gen", nothing: true},
	{prefix: "cmd/", may: []string{"", "api", "host", "server", "server/client", "server/state", "cmd/"}},
	{prefix: "host", may: []string{"", "api", "host/", "index", "index/", "registry", "sdk"}},
	// The features: the domain, lower host packages (the compiler keeps
	// them acyclic), the index; the table's names (api: a write names
	// itself in its Change and its journal record by the table's Op);
	// the plugin contracts for those that run plugins.
	{prefix: "host/", may: []string{"", "api", "host/", "index", "index/", "registry", "sdk", "modelstore"}},
	{prefix: "server", may: []string{"", "api", "server/", "mcp"}},
	{prefix: "server/", may: []string{"", "api", "server/"}},
	{prefix: "mcp", may: []string{"", "api"}},
	{prefix: "index", may: []string{"", "index/"}},
	{prefix: "index/", may: []string{"", "index", "index/"}},
	{prefix: "internal/fsx", nothing: true},
}

// layeringDebt are the imports that break a row today, each with what it
// is for: TestLayering fails on a new one and on one that is gone (drop
// it here), so the list only shrinks.
var layeringDebt = map[string]string{
	"cmd/memhost-core -> host/config":                     "the CLI reads config.yaml before it dials a server",
	"cmd/memhost-core -> registry":                        "the plugin commands list installed plugins",
	"cmd/memhost-core/internal/cmdapp -> host/config":     "--home and the configuration the commands read",
	"cmd/memhost-core/internal/cmdapp -> host/notebook":   "path checks before a request is sent",
	"cmd/memhost-core/internal/cmdapp -> modelstore":      "the model's progress bar",
	"cmd/memhost-core/internal/corecmd -> host/episodes":  "episodes' date parsing",
	"cmd/memhost-core/internal/corecmd -> host/eval":      "memhost eval runs host/eval, which is not an API operation",
	"cmd/memhost-core/internal/corecmd -> host/health":    "health's status words",
	"cmd/memhost-core/internal/corecmd -> modelstore":     "the default model's name",
	"cmd/memhost-core/internal/mcpcmd -> host/config":     "the flush prompt of the configuration",
	"cmd/memhost-core/internal/mcpcmd -> mcp":             "memhost mcp serves the MCP server",
	"cmd/memhost-core/internal/notecmd -> host/facts":     "fact attribute checks",
	"cmd/memhost-core/internal/notecmd -> host/federated": "federation's error for a home that is not a repository",
	"cmd/memhost-core/internal/notecmd -> modelstore":     "model names",
	"cmd/memhost-core/internal/servecmd -> mcp":           "memhost serve serves MCP over HTTP",
	"host/eval -> host":                                   "the eval opens homes: a benchmark, not a feature of the core",
	"mcp -> host/config":                                  "the default flush prompt",
	"server -> host":                                      "the server holds the *host.Host it serves",
	"server -> host/config":                               "the server rereads config.yaml",
	"server -> host/health":                               "GET /api/health's status code by health's words",
	"server/dashboard -> host/browse":                     "the dashboard's page listing types",
	"server/dashboard -> host/facts":                      "fact pages' rendering",
	"server/dashboard/pagehtml -> host/markdown":          "the one markdown reader (headings, frontmatter, fences)",
	"server/debug -> host":                                "the debug API's page writes and rebuilds",
	"server/debug -> host/markdown":                       "page sections",
	"server/debug -> host/requests":                       "the request journal's view",
	"server/wire -> host/config":                          "the environment fingerprint of config overrides",
	"server/wire -> host/notebook":                        "path errors' kinds",
}

// TestLayering: every package imports only what its row of the package
// table allows, but the listed debt.
func TestLayering(t *testing.T) {
	const module = "github.com/memhost/memhost"
	seen := map[string]bool{}
	byPkg := map[string]map[string]bool{}
	goSources(t, func(rel, file string) {
		if strings.HasPrefix(rel, "plugins/") || strings.HasPrefix(rel, "examples/") {
			return // their own modules
		}
		af, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		pkg := path.Dir(rel)
		if pkg == "." {
			pkg = ""
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			if byPkg[pkg] == nil {
				byPkg[pkg] = map[string]bool{}
			}
			byPkg[pkg][strings.TrimPrefix(strings.TrimPrefix(p, module), "/")] = true
		}
	})
	var pkgs []string
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, pkg := range pkgs {
		row, ok := rowOf(pkg)
		if !ok {
			continue // registry, sdk, modelstore, internal/: as they are
		}
		for imp := range byPkg[pkg] {
			if allowed(row.may, row.nothing, imp) {
				continue
			}
			key := pkg + " -> " + imp
			if pkg == "" {
				key = "(root) -> " + imp
			}
			if _, ok := layeringDebt[key]; ok {
				seen[key] = true
				continue
			}
			t.Errorf("%s imports %s, which its row (%s) does not allow", pkg, imp, row.prefix)
		}
	}
	for key := range layeringDebt {
		if !seen[key] {
			t.Errorf("layeringDebt lists %q, which no longer happens: drop it", key)
		}
	}
	if len(byPkg) < 40 {
		t.Fatalf("read the imports of %d packages only", len(byPkg))
	}
}

type layer = struct {
	prefix  string
	may     []string
	nothing bool
}

// rowOf returns the row of pkg: the longest prefix naming it ("host"
// names host only, "host/" every package under host).
func rowOf(pkg string) (layer, bool) {
	var best layer
	found := false
	for _, l := range layers {
		match := pkg == l.prefix || strings.HasSuffix(l.prefix, "/") && strings.HasPrefix(pkg, l.prefix)
		if match && len(l.prefix) >= len(best.prefix) {
			best, found = l, true
		}
	}
	return best, found
}

func allowed(may []string, nothing bool, imp string) bool {
	if nothing {
		return false
	}
	if strings.HasPrefix(imp, "internal/") {
		return true
	}
	for _, m := range may {
		if m == "" && (imp == "knowledge" || imp == "fault") {
			return true
		}
		if imp == m || strings.HasSuffix(m, "/") && strings.HasPrefix(imp, m) {
			return true
		}
	}
	return false
}
