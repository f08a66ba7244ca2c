package config

import (
	"fmt"
	"net/url"
)

// Health holds the thresholds of `memhost health`. A figure above its
// Warn threshold makes the check warn (DEGRADED), above its Fail
// threshold fail (UNHEALTHY); a Fail of 0 never fails.
type Health struct {
	// PendingWarn and PendingFail bound the chunks waiting in a stuck
	// embedding queue (its provider cannot embed, or its worker fails or
	// makes no progress for StaleGraceMinutes): a stuck queue warns, and
	// fails above PendingFail. A queue being worked through, or left for
	// the next search, passes however long. Defaults 5 and 20 (0-5
	// healthy, 6-20 degraded, >20 unhealthy). Any dead chunk fails the
	// check.
	PendingWarn int `yaml:"pendingWarn"`
	PendingFail int `yaml:"pendingFail"`
	// DeadAfterFailures is how often embedding a chunk may fail before it
	// is dead: kept, reported, and no longer retried until `memhost health
	// --repair`. Default 5.
	DeadAfterFailures int `yaml:"deadAfterFailures"`
	// LatencyWarnMs and LatencyFailMs bound the provider's p95 latency
	// embedding a short query. Defaults 2000 and 10000.
	LatencyWarnMs int `yaml:"latencyWarnMs"`
	LatencyFailMs int `yaml:"latencyFailMs"`
	// DriftWarn and DriftFail bound index rows out of step with each
	// other (chunks, FTS rows, vectors, transcript turns). Defaults 0 and
	// 10.
	DriftWarn int `yaml:"driftWarn"`
	DriftFail int `yaml:"driftFail"`
	// DatabaseWarnMB and DatabaseFailMB bound brain/memory.db (with its
	// WAL). Defaults 200 and 500.
	DatabaseWarnMB int `yaml:"databaseWarnMB"`
	DatabaseFailMB int `yaml:"databaseFailMB"`
	// VaultWarnMB and VaultFailMB bound the notebook and sessions folders
	// together. Defaults 1024 and 0 (never fails).
	VaultWarnMB int `yaml:"vaultWarnMB"`
	VaultFailMB int `yaml:"vaultFailMB"`
	// StaleGraceMinutes: a page changed on disk less than this long ago
	// and not yet indexed is normal (the next recall or the watcher
	// indexes it); older ones warn. An embedding worker failing or
	// without progress for this long is stuck. Default 10.
	StaleGraceMinutes int `yaml:"staleGraceMinutes"`
	// MinCacheHitRate warns when the embedding cache's hit rate is below
	// it (0..1). Default 0, off: the cache is keyed by chunk content, so
	// new content always misses; a floor such as 80% fits only a cache of
	// repeated content.
	MinCacheHitRate float64 `yaml:"minCacheHitRate"`
	// EveryMin: while the home is watched (memhost serve), the check runs
	// this often, its report kept in health/history/ and its changes
	// alerted. Default 30; 0 is never.
	EveryMin int `yaml:"everyMin"`
	// KeepDays: reports in health/history/ older than this are removed.
	// Default 14.
	KeepDays int `yaml:"keepDays"`
	// Alerts says where the scheduled check's alerts go.
	Alerts Alerts `yaml:"alerts"`
}

// Alerts are the sinks of health alerts: a failing check is sent at once,
// warnings once an hour, the day's summary once a day. With neither sink
// nothing is sent (the history is still kept).
type Alerts struct {
	// Command is run, never through a shell, with an alert's JSON on its
	// stdin: argv[0] and its arguments. Default none.
	Command []string `yaml:"command"`
	// Webhook is a URL an alert's JSON is POSTed to; redirects to another
	// host are not followed. Default none.
	Webhook string `yaml:"webhook"`
	// TimeoutMs bounds one delivery to one sink. Default 10000.
	TimeoutMs int `yaml:"timeoutMs"`
}

// DefaultHealth returns the thresholds' defaults.
func DefaultHealth() Health {
	return Health{PendingWarn: 5, PendingFail: 20, DeadAfterFailures: 5, LatencyWarnMs: 2000, LatencyFailMs: 10000,
		DriftWarn: 0, DriftFail: 10, DatabaseWarnMB: 200, DatabaseFailMB: 500, VaultWarnMB: 1024, VaultFailMB: 0,
		StaleGraceMinutes: 10, EveryMin: 30, KeepDays: 14, Alerts: Alerts{Command: []string{}, TimeoutMs: 10000}}
}

func (h Health) validate() error {
	bad := func(key, msg string) error { return &Error{"config", "health." + key, 0, msg} }
	// In the order of the file, so that the first bad key is named.
	for _, kv := range []struct {
		key string
		v   int
	}{{"pendingWarn", h.PendingWarn}, {"pendingFail", h.PendingFail}, {"latencyWarnMs", h.LatencyWarnMs},
		{"latencyFailMs", h.LatencyFailMs}, {"driftWarn", h.DriftWarn}, {"driftFail", h.DriftFail}, {"databaseWarnMB", h.DatabaseWarnMB},
		{"databaseFailMB", h.DatabaseFailMB}, {"vaultWarnMB", h.VaultWarnMB}, {"vaultFailMB", h.VaultFailMB}, {"staleGraceMinutes", h.StaleGraceMinutes},
		{"everyMin", h.EveryMin}} {
		if kv.v < 0 {
			return bad(kv.key, fmt.Sprintf("must not be negative, got %d", kv.v))
		}
	}
	switch {
	case h.DeadAfterFailures < 1:
		return bad("deadAfterFailures", fmt.Sprintf("must be at least 1, got %d", h.DeadAfterFailures))
	case h.MinCacheHitRate < 0 || h.MinCacheHitRate > 1:
		return bad("minCacheHitRate", fmt.Sprintf("must be between 0 and 1, got %g", h.MinCacheHitRate))
	case h.KeepDays < 1:
		return bad("keepDays", fmt.Sprintf("must be at least 1, got %d", h.KeepDays))
	case h.Alerts.TimeoutMs < 1:
		return bad("alerts.timeoutMs", fmt.Sprintf("must be at least 1, got %d", h.Alerts.TimeoutMs))
	case len(h.Alerts.Command) > 0 && h.Alerts.Command[0] == "":
		return bad("alerts.command", "want a program and its arguments, such as [/home/ada/bin/on-alert, --from, memhost]")
	}
	if w := h.Alerts.Webhook; w != "" {
		u, err := url.Parse(w)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return bad("alerts.webhook", fmt.Sprintf("want an http or https URL, got %q", w))
		}
	}
	return nil
}
