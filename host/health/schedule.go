package health

import (
	"context"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/health/alert"
	"github.com/memhost/memhost/host/health/history"
	"github.com/memhost/memhost/host/schedule"
)

// RunSchedule (run by Watch: memhost serve and memhost watch) checks the
// home every health.everyMin minutes until ctx ends, reading the
// configuration again each time, so a change applies from the next
// wait; with 0 it only looks again a minute later. Each check's report
// goes to health/history/ (as any check's) and its changes to the
// alert sinks (RunScheduled).
func (hs *HealthService) RunSchedule(ctx context.Context) {
	schedule.Every(ctx, time.Minute, hs.after, func() int { return hs.k.Config().Health.EveryMin }, hs.RunScheduled)
}

// RunScheduled runs one scheduled check: the report, its history and its
// alerts. What fails is logged; the sinks are bounded by
// health.alerts.timeoutMs each.
func (hs *HealthService) RunScheduled(ctx context.Context) {
	resp, err := hs.Health(ctx, memhost.HealthRequest{})
	if err != nil {
		if ctx.Err() == nil {
			hs.k.Log().Warn("scheduled health check failed", "err", err)
		}
		return
	}
	hs.k.Log().Info("scheduled health check", "overall", resp.Overall)
	cfg := hs.k.Config().Health.Alerts
	timeout := time.Duration(cfg.TimeoutMs) * time.Millisecond
	var sinks []alert.Sink
	if len(cfg.Command) > 0 {
		sinks = append(sinks, alert.Command{Argv: cfg.Command, Timeout: timeout})
	}
	if cfg.Webhook != "" {
		sinks = append(sinks, alert.Webhook{URL: cfg.Webhook, Timeout: timeout})
	}
	r := alert.Router{Home: hs.k.Home(), Sinks: sinks, Location: hs.k.Location(), Log: hs.k.Log()}
	if err := r.Route(ctx, resp.HealthReport, hs.k.Now()); err != nil && ctx.Err() == nil {
		hs.k.Log().Warn("health alerts: not routed", "err", err)
	}
}

// HealthHistory returns the kept reports, newest first.
func (hs *HealthService) HealthHistory(ctx context.Context, req memhost.HealthHistoryRequest) (memhost.HealthHistoryResponse, error) {
	if err := req.Check(); err != nil {
		return memhost.HealthHistoryResponse{}, err
	}
	reps, err := history.Read(hs.k.Home(), req.Limit)
	return memhost.HealthHistoryResponse{Reports: reps}, err
}

// saveHistory keeps rep in health/history/; a failure is logged, as the
// check itself stands.
func (hs *HealthService) saveHistory(rep memhost.HealthReport) {
	keep := time.Duration(hs.k.Config().Health.KeepDays) * 24 * time.Hour
	if err := history.Save(hs.k.Home(), rep, hs.k.Now(), keep); err != nil {
		hs.k.Log().Warn("health history: the report was not kept", "err", err)
	}
}
