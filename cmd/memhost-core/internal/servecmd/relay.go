package servecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/memhost/memhost/cmd/memhost-core/internal/cmdapp"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/internal/relay"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server"
)

// relayHandler runs commands for the thin launcher inside the server (see
// internal/relay): the same run() as a memhost-core process, with the
// launcher's arguments, environment, working folder and stdio. Served on
// the unix socket only. The command reaches the server's data as any CLI
// does... but on the server's own Host: when the launcher's environment
// would read the configuration (or the clock) otherwise, the launcher is
// told to run memhost-core itself instead.
func (a cmds) relayHandler(h *host.Host, srv *server.Server) http.HandlerFunc {
	serverEnv := server.EnvFingerprint(server.EnvOverrides(a.IO.Getenv))
	return func(w http.ResponseWriter, r *http.Request) { a.relay(h, srv, serverEnv, w, r) }
}

func (a cmds) relay(h *host.Host, srv *server.Server, serverEnv string, w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != relay.Upgrade {
		http.Error(w, "want Upgrade: "+relay.Upgrade, http.StatusBadRequest)
		return
	}
	if v := r.Header.Get("Memhost-Version"); v != version.String() {
		// The launcher then runs memhost-core, which says what differs.
		http.Error(w, "memhost "+version.String(), http.StatusConflict)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "cannot relay", http.StatusInternalServerError)
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: %s\r\nConnection: Upgrade\r\n\r\n", relay.Upgrade)
	if brw.Flush() != nil {
		return
	}
	typ, p, err := relay.Read(brw.Reader)
	var hello relay.HelloMsg
	if err != nil || typ != relay.Hello || json.Unmarshal(p, &hello) != nil || len(hello.Args) == 0 {
		return
	}
	env := hello.Env
	getenv := func(k string) string { return env[k] }
	if server.EnvFingerprint(server.EnvOverrides(getenv)) != serverEnv {
		// The server reads its configuration (or the clock) otherwise:
		// the launcher runs memhost-core itself.
		relay.Write(conn, relay.Exit, relay.ExitPayload(relay.ExitRunLocally))
		return
	}

	var wmu sync.Mutex
	out := func(typ byte) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			wmu.Lock()
			defer wmu.Unlock()
			if err := relay.Chunks(conn, typ, p); err != nil {
				return 0, err
			}
			return len(p), nil
		})
	}
	// The launcher's end of the connection ends the command (Ctrl-C).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	in := &lazyStdin{ask: func() { wmu.Lock(); relay.Write(conn, relay.WantIn, nil); wmu.Unlock() }, pr: pr}
	go func() {
		defer cancel()
		for {
			typ, p, err := relay.Read(brw.Reader)
			if err != nil {
				pw.CloseWithError(io.ErrUnexpectedEOF)
				return
			}
			switch typ {
			case relay.Stdin:
				if _, err := pw.Write(p); err != nil {
					return
				}
			case relay.StdinEOF:
				pw.Close()
			}
		}
	}()
	// As the API does at each request (server.common): a config.yaml a
	// command just changed (git init --remote) is read before this one.
	h.RecheckConfig()
	code := a.run(ctx, hello.Args, cmdapp.Stdio{
		Stdin:        in,
		StdinIsPiped: hello.StdinPiped,
		Stdout:       out(relay.Stdout),
		StdoutIsTTY:  hello.StdoutTTY,
		Stderr:       out(relay.Stderr),
		Getenv:       getenv,
		Environ: func() []string {
			var env []string
			for k, v := range hello.Env {
				env = append(env, k+"="+v)
			}
			return env
		},
		Cwd:    hello.Cwd,
		Shared: h,
		Follow: srv.Follow,
	})
	pr.CloseWithError(io.EOF) // unblock the reader: stdin the command left unread
	wmu.Lock()
	relay.Write(conn, relay.Exit, relay.ExitPayload(code))
	wmu.Unlock()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// lazyStdin asks the launcher for its stdin on the first Read only.
type lazyStdin struct {
	once sync.Once
	ask  func()
	pr   *io.PipeReader
}

func (l *lazyStdin) Read(p []byte) (int, error) {
	l.once.Do(l.ask)
	n, err := l.pr.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return n, fmt.Errorf("the launcher went away: %w", err)
	}
	return n, err
}
