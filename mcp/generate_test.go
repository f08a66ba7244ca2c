package mcp_test

import (
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/mcp"
)

// TestRememberAuto: the remember tool takes auto; without a generator the
// rules route, and the answer says so.
func TestRememberAuto(t *testing.T) {
	h := openHome(t)
	cs := connect(t, mcp.New(h, mcp.Options{}), nil)
	var rem memhost.RememberResponse
	res := call(t, cs, "remember", map[string]any{"text": "Sarah Chen - Phone: 555-1234", "auto": true})
	structured(t, res, &rem)
	if rem.Path != "reference/contacts.md" || rem.Routing != host.RoutedByRules || len(rem.Warnings) != 1 ||
		!strings.Contains(rem.Warnings[0], "no generator configured") || !strings.HasSuffix(text(res), "Chosen by the rules.") {
		t.Errorf("remember auto: %+v %q", rem, text(res))
	}
}
