package mcp

import (
	"fmt"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
)

// addHealthTools registers health_history, which runs host.HealthHistory.
func (s *srv) addHealthTools() {
	addTool(s, api.OpHealthHistory, tool[memhost.HealthHistoryRequest, memhost.HealthHistoryResponse]{
		name: "health_history", title: "Health history",
		description: "Health reports of the memory home, newest first: since when something is wrong, or whether it came back.",
		reword:      func(_ memhost.HealthHistoryRequest, err error) error { return about("limit", err) },
		done: func(_ *mcpsdk.CallToolRequest, _ memhost.HealthHistoryRequest, r memhost.HealthHistoryResponse) string {
			return renderHealthHistory(r)
		},
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
