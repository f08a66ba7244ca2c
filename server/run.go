package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/internal/sockpath"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server/auth"
	"github.com/memhost/memhost/server/dashboard"
	"github.com/memhost/memhost/server/state"
)

// RunOptions configure Run.
type RunOptions struct {
	Home string // required
	// Open opens the home's Host; Run calls it once it holds the lock and
	// closes the Host when it stops.
	Open func(ctx context.Context) (*host.Host, error)
	// Listen overrides server.listen from the config when not nil: a TCP
	// address ("127.0.0.1:4321", port 0 for any free one) or "" for the
	// unix socket only.
	Listen *string
	// TokenFile overrides server.tokenFile when not "".
	TokenFile string
	// Log receives the server's log; nil discards it.
	Log *slog.Logger
	// LogPath names the log file in the server's Info (--detach).
	LogPath string
	// Ready, when set, is called once the server listens.
	Ready func(Info)
	// ShutdownTimeout bounds the wait for requests in flight when the
	// server stops; 0 means 30 s.
	ShutdownTimeout time.Duration
	// MaxBody and MaxBodies: see Options.
	MaxBody, MaxBodies int64
	// AfterWrite: see Options.
	AfterWrite func(op string)
	// SocketRoutes, when set, gives routes served on the unix socket only,
	// before the API's, over the server's Host and Server (memhost-core
	// adds the launcher's relay). Their handlers may hijack the
	// connection: Run waits for every one to return before it closes the
	// Host, and refuses new ones (503) once it is stopping.
	SocketRoutes func(h *host.Host, s *Server) map[string]http.Handler
	// MCP, when set, returns the handler of /mcp (MCP over streamable
	// HTTP, usually NewMCPHandler), served on every listener with the
	// API's auth; nil serves no /mcp.
	MCP func(h *host.Host, s *Server) http.Handler
	// OnDemand marks a server a command started (Info.OnDemand): it
	// listens on the unix socket only unless an address is chosen
	// (Listen, or server.listen in config.yaml or the environment), and
	// exits once IdleExit
	// has passed without a request and with none running (0: never).
	OnDemand bool
	IdleExit time.Duration
	// Getenv is the environment the Host's configuration was read with
	// (config.Overrides): clients with other overrides run in-process.
	// Nil means os.Getenv.
	Getenv func(string) string
}

// Run serves home until ctx ends or a client asks it to stop, then
// finishes the requests in flight, stops the watcher and the plugins and
// returns nil. One server runs per home: a second Run fails with a
// conflict naming the first one's pid.
func Run(ctx context.Context, opts RunOptions) error {
	home := state.Canonical(opts.Home)
	if opts.ShutdownTimeout == 0 {
		opts.ShutdownTimeout = 30 * time.Second
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Join(home, "brain"), 0o700); err != nil {
		return fmt.Errorf("home %s: %w", home, err)
	}
	unlock, err := state.Lock(home)
	if err != nil {
		return err
	}
	defer unlock()

	h, err := opts.Open(ctx)
	if err != nil {
		return err
	}
	defer h.Close()
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := h.Config().Server
	listen := cfg.Listen
	// An address the user chose is kept or refused; the default one gives
	// way, so that two homes of one machine can both run a server.
	chosen := opts.Listen != nil || config.Given(filepath.Join(home, config.FileName), getenv, "server.listen")
	if opts.Listen != nil {
		listen = *opts.Listen
	}
	if opts.OnDemand && !chosen {
		listen = "" // a command started it: no port it did not ask for
	}
	tokenFile := cfg.TokenFile
	if tokenFile != "" && !filepath.IsAbs(tokenFile) {
		tokenFile = filepath.Join(home, tokenFile) // config paths are the home's
	}
	if opts.TokenFile != "" {
		tokenFile = opts.TokenFile
	}

	// The socket: a file left by a server that died is removed (the lock
	// says none runs). Created with mode 0600 from the start.
	sock := SocketPath(home)
	if err := sockpath.Prepare(sock); err != nil {
		return err
	}
	if err := os.Remove(sock); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stale socket %s: %w", sock, err)
	}
	unixLn, err := listenPrivate(sock)
	if err != nil {
		return fmt.Errorf("socket %s: %w", sock, err)
	}
	defer os.Remove(sock)
	if err := os.Chmod(sock, 0o600); err != nil {
		unixLn.Close()
		return fmt.Errorf("socket %s: %w", sock, err)
	}

	var tcpLn net.Listener
	token := ""
	moved := ""
	if listen != "" {
		if !auth.IsLoopback(listen) || tokenFile != "" { // a token file asked for is used on loopback too
			if tokenFile == "" {
				tokenFile = state.TokenPath(home)
			}
			if token, err = auth.LoadToken(tokenFile); err != nil {
				unixLn.Close()
				return err
			}
		}
		tcpLn, err = net.Listen("tcp", listen)
		if errors.Is(err, syscall.EADDRINUSE) {
			moved = fmt.Sprintf("%s is in use by %s", listen, state.PortHolder(ctx, listen))
			if chosen {
				unixLn.Close()
				return fault.Errorf(fault.Conflict, "listen", "address %s", moved)
			}
			if hostPart, _, serr := net.SplitHostPort(listen); serr == nil {
				tcpLn, err = net.Listen("tcp", net.JoinHostPort(hostPart, "0"))
			}
		}
		if err != nil {
			unixLn.Close()
			return fault.Errorf(fault.BadInput, "listen", "cannot listen on %q: %v", listen, err)
		}
	}

	info := Info{PID: os.Getpid(), Version: version.String(), Home: home, Notebook: h.NotebookDir(),
		Socket: sock, Token: token != "", Started: time.Now().UTC().Truncate(time.Second), LogPath: opts.LogPath,
		OnDemand: opts.OnDemand}
	if opts.OnDemand {
		info.IdleExitS = int(opts.IdleExit / time.Second)
	}
	if tcpLn != nil {
		info.URL = "http://" + state.DisplayAddr(tcpLn.Addr())
		info.Moved = moved
		if moved != "" {
			log.Warn("the default address is taken; listening on a free port", "held", moved, "url", info.URL)
		}
	}
	var watching atomic.Bool
	stopc := make(chan struct{})
	var stopOnce sync.Once
	s := New(h, Options{Log: log, MaxBody: opts.MaxBody, MaxBodies: opts.MaxBodies, AfterWrite: opts.AfterWrite, Env: EnvFingerprint(EnvOverrides(getenv)),
		Info: func() Info { in := info; in.Watcher = watching.Load(); return in },
		Stop: func() { stopOnce.Do(func() { close(stopc) }) }})
	defer s.Close()
	if opts.MCP != nil {
		s.mcp = opts.MCP(h, s)
	}

	// The watcher: freshness for searches, the embedding worker, events.
	watchCtx, stopWatch := context.WithCancel(context.Background())
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		watching.Store(true)
		err := h.Watch(watchCtx, host.WatchRequest{
			OnSync: func(r memhost.SyncResult) {
				s.lastSyncMs.Store(r.DurationMs)
				s.Publish("sync", r)
			},
			OnGitSync: func(r memhost.SyncResult) { s.Publish("git-sync", r) },
			OnEmbed:   func(r memhost.EmbedResult) { s.Publish("embed", r) },
		})
		watching.Store(false)
		if err != nil && watchCtx.Err() == nil {
			log.Error("the notebook watcher stopped; searches stat every page from now on", "err", err)
		}
	}()
	defer func() { stopWatch(); <-watchDone }()

	hs := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		// Requests outlive the server's context: a stop lets them finish.
		BaseContext: func(net.Listener) context.Context { return context.Background() },
	}
	serveErr := make(chan error, 2)
	var (
		socketRuns sync.WaitGroup // socket routes in flight, hijacked or not
		stopping   atomic.Bool
	)
	if opts.SocketRoutes != nil {
		mux := http.NewServeMux()
		for p, route := range opts.SocketRoutes(h, s) {
			mux.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				socketRuns.Add(1)
				defer socketRuns.Done()
				s.requests.Add(1)
				s.inflight.Add(1)
				defer s.inflight.Add(-1)
				if stopping.Load() {
					writeError(w, &fault.Error{Kind: fault.Unavailable, Message: "the server is stopping"})
					return
				}
				route.ServeHTTP(w, r)
			}))
		}
		mux.Handle("/", hs.Handler)
		hs.Handler = mux
	}
	// Before the Host closes: the socket routes' commands and background
	// work (rebuilds) finish.
	defer func() {
		stopping.Store(true)
		done := make(chan struct{})
		go func() { socketRuns.Wait(); s.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(opts.ShutdownTimeout):
			log.Warn("commands still running at shutdown; stopping anyway")
		}
	}()
	// Logged before the first request can be answered: a client that
	// reached the server finds this line in its log (--detach).
	log.Info("serving", "pid", info.PID, "socket", sock, "url", info.URL, "version", info.Version)
	go func() { serveErr <- hs.Serve(unixLn) }()
	var tcp *http.Server
	if tcpLn != nil {
		tcp = &http.Server{Handler: auth.Guard(s.Handler(), token, dashboard.Boot), ReadHeaderTimeout: hs.ReadHeaderTimeout, ErrorLog: hs.ErrorLog, BaseContext: hs.BaseContext}
		go func() { serveErr <- tcp.Serve(tcpLn) }()
	}
	if err := state.Write(home, info); err != nil {
		log.Warn("cannot write the server's state file", "err", err)
	}
	defer os.Remove(state.StatePath(home))
	if opts.Ready != nil {
		opts.Ready(info)
	}

	idle := make(chan struct{})
	if opts.OnDemand && opts.IdleExit > 0 {
		go s.watchIdle(opts.IdleExit, idle, stopc)
	}
	select {
	case <-ctx.Done():
	case <-idle:
		log.Info("no request for the idle time of a server started on demand", "idle", opts.IdleExit)
	case <-stopc:
	case err := <-serveErr:
		if !errors.Is(err, http.ErrServerClosed) {
			log.Error("serving failed", "err", err)
		}
	}
	log.Info("stopping: finishing requests in flight")
	s.Close() // event streams and rebuilds end now; Shutdown waits for the rest
	var wg sync.WaitGroup
	for _, srv := range []*http.Server{hs, tcp} {
		if srv != nil {
			wg.Add(1)
			go func() { defer wg.Done(); shutdown(srv, opts.ShutdownTimeout) }()
		}
	}
	wg.Wait() // both listeners close at once, requests in flight finish
	return nil
}

// watchIdle closes idle once no request has come for d and none runs,
// unless stop closes first. It looks every d/10 (at most every second):
// a server is idle at most a tenth longer than d.
func (s *Server) watchIdle(d time.Duration, idle, stop chan struct{}) {
	every := min(d/10, time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	seen, since := s.requests.Load(), time.Now()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			if n := s.requests.Load(); n != seen || s.inflight.Load() > 0 {
				seen, since = n, now
				continue
			}
			if now.Sub(since) >= d {
				close(idle)
				return
			}
		}
	}
}

// shutdown stops hs, waiting up to timeout for its requests.
func shutdown(hs *http.Server, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if hs.Shutdown(ctx) != nil {
		hs.Close()
	}
}

// umaskMu serialises listenPrivate: the umask is the process's, and two
// servers starting at once in one process (tests) each restoring the
// other's 0077 left every later file of the process created 0600.
var umaskMu sync.Mutex

// listenPrivate listens on the unix socket sock, created with mode 0600
// from the start (the umask 0077 for the length of the bind).
func listenPrivate(sock string) (net.Listener, error) {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	return net.Listen("unix", sock)
}
