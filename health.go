package memhost

import "github.com/memhost/memhost/fault"

// Status is a check's outcome.
type HealthStatus string

// Overall is the home's state: the worst of its checks.
type HealthOverall string

// Check is one check's outcome.
type HealthCheck struct {
	Name      string         `json:"name"`
	Status    HealthStatus   `json:"status"`
	Message   string         `json:"message"`
	LatencyMs float64        `json:"latencyMs,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// HealthMetrics are the figures behind the checks.
type HealthMetrics struct {
	Files            int      `json:"files"`
	Chunks           int      `json:"chunks"`
	QueuePending     int      `json:"queuePending"`
	QueueDead        int      `json:"queueDead"`
	Drift            int      `json:"drift"` // index rows and transcript turns out of step
	LatencyP95Ms     *float64 `json:"latencyP95Ms,omitempty"`
	CacheHitRate     *float64 `json:"embeddingCacheHitRate,omitempty"`
	DatabaseBytes    int64    `json:"dbSizeBytes"`
	VaultBytes       int64    `json:"vaultSizeBytes"`
	LastSync         string   `json:"lastSync,omitempty"`
	LastWatcherEvent string   `json:"lastWatcherEvent,omitempty"`
}

// Report is a health check of a home.
type HealthReport struct {
	Timestamp string        `json:"timestamp"` // RFC 3339, UTC
	Overall   HealthOverall `json:"overall"`
	Checks    []HealthCheck `json:"checks"`
	Metrics   HealthMetrics `json:"metrics"`
}

// Sizes are the database's and the vault's (notebook and sessions) bytes.
type HealthSizes struct {
	DatabaseBytes, VaultBytes int64
}

// HealthRequest asks for a health check of the home.
type HealthRequest struct {
	// Repair fixes what it can before the report is made: a damaged or
	// drifted index is rebuilt, changed files synced, files left by dead
	// processes removed, dead embedding-queue entries queued again.
	Repair bool `json:"repair,omitempty"`
	// IntoNotebook writes the report to HEARTBEAT.md in the notebook
	// instead of health/latest-report.md in the home.
	IntoNotebook bool `json:"intoNotebook,omitempty"`
	// NoHistory leaves the report out of health/history/: GET /api/health
	// sets it, so that a monitor polling it does not fill the history.
	NoHistory bool `json:"noHistory,omitempty"`
	// NoReport writes the report nowhere (ReportPath is empty): GET
	// /api/health sets it, so that a GET, which any web page can make a
	// browser send, writes no file.
	NoReport bool `json:"noReport,omitempty"`
}

// HealthResponse is the report (HealthReport), what a repair did, and
// where the report's markdown was written.
type HealthResponse struct {
	HealthReport
	Repairs    []string `json:"repairs,omitempty"`
	ReportPath string   `json:"reportPath"`
}

// HealthHistoryRequest asks for the reports kept in health/history/,
// newest first: at most Limit (0 is 48).
type HealthHistoryRequest struct {
	Limit int `json:"limit,omitempty" jsonschema:"default 48"`
}

// Check refuses a negative limit.
func (r HealthHistoryRequest) Check() error {
	if r.Limit < 0 {
		return fault.BadInputf("limit", "limit must not be negative, got %d", r.Limit)
	}
	return nil
}

// HealthHistoryResponse holds the kept reports, newest first.
type HealthHistoryResponse struct {
	Reports []HealthReport `json:"reports"`
}
