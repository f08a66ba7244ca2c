package server

import (
	"context"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// A health check is heavy: every page stat'ed, the index's integrity
// checked, the provider probed with five embeddings. GET /api/health is
// what monitors poll, and what a browser too old to say where a request
// comes from would send for any page's images; so its checks run one at
// a time: a GET that comes while one runs waits for it and answers its
// report. The check is detached from the GETs (one that leaves does not
// end it for the others), counted in the server's background work and
// cancelled by Close. A GET after it ended runs a new one: a monitor always
// sees the home as it is now.

// healthRun is one check of GET /api/health; its fields are set before
// done is closed.
type healthRun struct {
	done chan struct{}
	resp memhost.HealthResponse
	err  error
}

// healthNow answers the check running, or starts one, and waits for it
// until ctx ends.
func (s *Server) healthNow(ctx context.Context) (memhost.HealthResponse, error) {
	s.healthMu.Lock()
	run := s.healthCur
	if run == nil {
		run = &healthRun{done: make(chan struct{})}
		s.healthCur = run
		s.background.Add(1)
		go s.runHealth(run)
	} else if s.healthJoined != nil {
		s.healthJoined()
	}
	s.healthMu.Unlock()
	select {
	case <-run.done:
		return run.resp, run.err
	case <-ctx.Done():
		return memhost.HealthResponse{}, fault.Errorf(fault.Canceled, "", "the client left during the health check: %w", ctx.Err())
	}
}

// runHealth runs the check of run until it ends or the server closes.
func (s *Server) runHealth(run *healthRun) {
	defer s.background.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.closing:
			cancel()
		case <-ctx.Done():
		}
	}()
	check := s.healthCheck
	if check == nil {
		check = func(ctx context.Context) (memhost.HealthResponse, error) {
			// Monitors poll: their checks are not kept in the history,
			// and a GET writes no report file.
			return s.h.Health(ctx, memhost.HealthRequest{NoHistory: true, NoReport: true})
		}
	}
	run.resp, run.err = check(ctx)
	s.healthMu.Lock()
	s.healthCur = nil
	s.healthMu.Unlock()
	close(run.done)
}
