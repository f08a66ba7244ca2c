package auth

import (
	"os"
	"regexp"
	"testing"
)

// TestDashPaths: every API route the dashboard's script calls is one the
// dashboard's key opens (a route added to app.js and not to dashPaths
// would answer 401 in the browser).
func TestDashPaths(t *testing.T) {
	js, err := os.ReadFile("../dashboard/static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	calls := regexp.MustCompile(`"(/api/[^"?]*)`).FindAllStringSubmatch(string(js), -1)
	if len(calls) == 0 {
		t.Fatal("no API call found in app.js")
	}
	for _, c := range calls {
		if !dashPaths(c[1]) {
			t.Errorf("app.js calls %s, which the dashboard's key does not open", c[1])
		}
	}
	for _, p := range []string{"/api/v1/write", "/api/v1/server/stop", "/mcp", "/api/debug/brain/inject-turn", "/api/debug/notebook/a.md"} {
		if dashPaths(p) {
			t.Errorf("the dashboard's key opens %s", p)
		}
	}
}
