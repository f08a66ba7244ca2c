package semantic

import (
	"context"
	"errors"
	"time"

	"github.com/memhost/memhost/api"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/generate"
	"github.com/memhost/memhost/host/schedule"
	"github.com/memhost/memhost/knowledge"
)

// recordRun stores the run ending now as the state's last; a failure to
// store it is logged (the run's own result stands).
func (s *FactService) recordRun(st *consolidated, started time.Time, out knowledge.ConsolidateResponse, err error) {
	run := &knowledge.ConsolidationRun{Started: started.UTC().Format(time.RFC3339), Finished: s.k.Now().UTC().Format(time.RFC3339),
		Episodes: out.Episodes, Applied: len(out.Applied), Skipped: len(out.Skipped), Model: out.Model, Warnings: len(out.Warnings)}
	if err != nil {
		run.Error = err.Error()
	}
	st.Last = run
	if serr := s.saveConsolidated(*st); serr != nil {
		s.k.Log().Warn("consolidation: the run's record was not stored", "err", serr)
	}
}

// ConsolidationState reads the generator's configuration and the last
// run from brain/consolidated.json.
func (s *FactService) ConsolidationState() knowledge.ConsolidationStatus {
	cfg := s.k.Config().Memory.Generator
	out := knowledge.ConsolidationStatus{Plugin: cfg.Plugin, State: "none", EveryMin: cfg.ConsolidateEveryMin}
	if cfg.Plugin != "" {
		out.State = "configured"
	}
	if b := s.gen.Load(); b != nil && b.g != nil {
		out.State = "in process"
	}
	if st, err := s.loadConsolidated(); err == nil {
		out.Last = st.Last
	}
	return out
}

// RunSchedule (run by Watch: memhost serve and memhost watch)
// runs Consolidate every
// memory.generator.consolidateEveryMin minutes until ctx ends, reading the
// configuration again each time (so a change applies without a restart);
// with 0, or no generator, it only looks again a minute later. A run's
// outcome goes to the log and, as any run's, to brain/consolidated.json.
func (s *FactService) RunSchedule(ctx context.Context) {
	minutes := func() int { return s.k.Config().Memory.Generator.ConsolidateEveryMin }
	schedule.Every(ctx, s.consolidateUnit, nil, minutes, s.scheduledConsolidation)
}

func (s *FactService) scheduledConsolidation(ctx context.Context) {
	if s.k.Config().Memory.Generator.Plugin == "" && s.gen.Load() == nil {
		return
	}
	res, err := s.Consolidate(ctx, knowledge.ConsolidateRequest{})
	s.k.Publish(api.OpConsolidate, knowledge.ConsolidateRequest{}, res, err)
	switch {
	case ctx.Err() != nil:
	case err != nil && errors.Is(err, generate.ErrNoGenerator):
	case fault.KindOf(err) == fault.Conflict: // another run (memhost consolidate) is at it
		s.k.Log().Info("scheduled consolidation skipped: another is running")
	case err != nil:
		s.k.Log().Warn("scheduled consolidation failed", "err", err)
	default:
		added := 0
		for _, f := range res.Applied {
			if !f.Confirmed && !f.Stale {
				added++
			}
		}
		s.k.Log().Info("scheduled consolidation", "episodes", res.Episodes, "facts", added, "skipped", len(res.Skipped))
	}
}
