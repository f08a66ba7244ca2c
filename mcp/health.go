package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
)

// HealthHistoryArgs are health_history's arguments.
type HealthHistoryArgs struct {
	Limit int `json:"limit,omitempty" jsonschema:"at most this many reports, newest first; default 48"`
}

// addHealthTools registers health_history (reading), which calls
// host.HealthHistory.
func (s *srv) addHealthTools(read *mcpsdk.ToolAnnotations) {
	add(s, &mcpsdk.Tool{Name: "health_history", Title: "Health history", Annotations: read,
		Description: "The memory home's kept health reports, newest first: when each check ran, the overall state " +
			"(HEALTHY, DEGRADED, UNHEALTHY) and every check's status and message. The server checks the home every 30 minutes " +
			"by default; use it to see since when something is wrong, or whether a problem came back."},
		nil, nil,
		func(ctx context.Context, _ *mcpsdk.CallToolRequest, a HealthHistoryArgs) (memhost.HealthHistoryResponse, string, error) {
			r, err := s.ops.HealthHistory(ctx, memhost.HealthHistoryRequest{Limit: a.Limit})
			return r, renderHealthHistory(r), about("limit", err)
		})
}

func renderHealthHistory(r memhost.HealthHistoryResponse) string {
	if len(r.Reports) == 0 {
		return "no health reports kept yet"
	}
	var b strings.Builder
	for _, rep := range r.Reports {
		fmt.Fprintf(&b, "%s %s\n", rep.Timestamp, rep.Overall)
		for _, c := range rep.Checks {
			if c.Status != "pass" {
				fmt.Fprintf(&b, "  %s %s: %s\n", c.Status, c.Name, c.Message)
			}
		}
	}
	return b.String()
}
