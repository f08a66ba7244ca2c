package host

import "github.com/memhost/memhost/host/health"

// Health report types, from package health.

// The overall states of a health report.
const (
	Healthy   = health.Healthy
	Degraded  = health.Degraded
	Unhealthy = health.Unhealthy
)

// Where Health writes its report: see health.HealthReportPath and
// health.HeartbeatPage.
const (
	HealthReportPath = health.HealthReportPath
	HeartbeatPage    = health.HeartbeatPage
)
