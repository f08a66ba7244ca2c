package server

import "github.com/memhost/memhost/server/debug"

// debugAPI is the server's debug endpoints (package debug), made on first
// use.
func (s *Server) debugAPI() *debug.API {
	s.debugOnce.Do(func() {
		s.debug = debug.New(debug.Deps{
			Host:       s.h,
			WriteJSON:  writeJSON,
			WriteError: writeError,
			Wire:       func(err error) any { return toWire(err) },
			Decode:     s.decode,
			Publish:    s.Publish,
			Closing:    s.closing,
			Background: &s.background,
			Watcher: func() bool {
				return s.opts.Info != nil && s.opts.Info().Watcher
			},
			LastSyncMs: func() (float64, bool) {
				d, ok := s.lastSyncMs.Load().(float64)
				return d, ok
			},
		})
	})
	return s.debug
}
