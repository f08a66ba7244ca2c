package auth

import (
	"os"
	"regexp"
	"testing"
)

// TestDashCookiePaths: every API route the dashboard's script calls is one
// the dashboard's cookie opens (a route added to app.js and not to
// dashCookiePaths would answer 401 in the browser).
func TestDashCookiePaths(t *testing.T) {
	js, err := os.ReadFile("../dashboard/static/app.js")
	if err != nil {
		t.Fatal(err)
	}
	calls := regexp.MustCompile(`"(/api/[^"?]*)`).FindAllStringSubmatch(string(js), -1)
	if len(calls) == 0 {
		t.Fatal("no API call found in app.js")
	}
	for _, c := range calls {
		if !dashCookiePaths(c[1]) {
			t.Errorf("app.js calls %s, which the dashboard's cookie does not open", c[1])
		}
	}
	for _, p := range []string{"/api/v1/write", "/api/v1/server/stop", "/mcp", "/api/debug/brain/inject-turn", "/api/debug/notebook/a.md"} {
		if dashCookiePaths(p) {
			t.Errorf("the dashboard's cookie opens %s", p)
		}
	}
}
