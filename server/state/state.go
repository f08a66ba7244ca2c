// Package state holds the files a server keeps in its home's brain/
// folder and what they say: serve.lock (one server per home), serve.json
// (Info: pid, version, addresses), the socket, log and token paths, and
// who holds a home's lock or a TCP address. It may import internal/fsx,
// internal/sockpath, fault and server/wire; nothing of server.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/internal/fsx"
	"github.com/memhost/memhost/internal/sockpath"
	"github.com/memhost/memhost/server/wire"
)

// Info describes a running server: its GET /api/v1/server answer and
// serve.json.
type Info struct {
	PID      int       `json:"pid"`
	Version  string    `json:"version"`
	Home     string    `json:"home"`
	Notebook string    `json:"notebook"`
	Socket   string    `json:"socket"`            // path of the unix socket
	URL      string    `json:"url,omitempty"`     // http://127.0.0.1:4321; "" without TCP
	Token    bool      `json:"token"`             // TCP requests need the bearer token
	Started  time.Time `json:"started"`           // RFC 3339
	UptimeS  float64   `json:"uptimeSeconds"`     // at the time of the answer
	Watcher  bool      `json:"watcherActive"`     // the notebook watcher runs
	LogPath  string    `json:"logPath,omitempty"` // with --detach
	Requests int64     `json:"requests"`          // answered since the start, this one included
	// Moved says why URL is not the address of the config: it was held
	// ("127.0.0.1:4321 is in use by memhost serve of /home/x (pid 7)") and
	// not chosen by the user, so the server took a free port instead.
	Moved string `json:"moved,omitempty"`
	// OnDemand: a command started the server (server.autostart), not
	// memhost serve; it exits after IdleExitS seconds without a request
	// (0: never).
	OnDemand  bool `json:"onDemand,omitempty"`
	IdleExitS int  `json:"idleExitSeconds,omitempty"`
}

// Lock takes brain/serve.lock for this process (released when it exits,
// however it exits), or says which server holds it.
func Lock(home string) (unlock func(), err error) {
	unlock, err = fsx.TryLock(lockPath(home))
	if err != nil {
		if !errors.Is(err, fsx.ErrLocked) {
			return nil, err
		}
		msg := "memhost serve already runs for " + home
		if in, err := Read(home); err == nil {
			msg = fmt.Sprintf("memhost serve already runs for %s (pid %d", home, in.PID)
			if in.URL != "" {
				msg += ", " + in.URL
			}
			msg += ")"
		}
		return nil, &fault.Error{Kind: fault.Conflict, Message: msg, Err: ErrRunning}
	}
	return unlock, nil
}

// ErrRunning is the cause of Lock's conflict: another server holds the
// home.
var ErrRunning = errors.New("a server runs for the home")

// Write writes brain/serve.json atomically.
func Write(home string, in Info) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return err
	}
	return fsx.WriteFileAtomic(StatePath(home), append(b, '\n'), 0o600)
}

// Read reads brain/serve.json: what the last server of home said
// about itself. It may be stale (a server killed with SIGKILL leaves it);
// ask the server itself (client.Client.Info) to know whether it runs.
func Read(home string) (Info, error) {
	var in Info
	b, err := os.ReadFile(StatePath(Canonical(home)))
	if err != nil {
		return in, err
	}
	return in, json.Unmarshal(b, &in)
}

// DisplayAddr is a listener's address as a URL host a person can open:
// an unspecified IP (0.0.0.0, ::) shows as 127.0.0.1.
func DisplayAddr(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok || !ta.IP.IsUnspecified() {
		return a.String()
	}
	return net.JoinHostPort("127.0.0.1", fmt.Sprint(ta.Port))
}

// Holder says which server holds home's lock when its socket does not
// answer (removed, or another user's): ok is false when no server holds
// it.
func Holder(home string) (Info, bool) {
	home = Canonical(home)
	if !fsx.Held(lockPath(home)) {
		return Info{}, false
	}
	in, err := Read(home)
	if err != nil {
		return Info{Home: home}, true
	}
	return in, true
}

// PortHolder names what holds the TCP address addr, for a person: a
// memhost server answers its info route (the guard sets the version header
// even on a request it refuses), anything else is another program.
func PortHolder(ctx context.Context, addr string) string {
	hostPart, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "another program"
	}
	if ip := net.ParseIP(hostPart); hostPart == "" || ip != nil && ip.IsUnspecified() {
		hostPart = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+net.JoinHostPort(hostPart, port)+"/api/v1/server", nil)
	if err != nil {
		return "another program"
	}
	// Whatever holds the port may be anyone's program: it gets one GET
	// on that address, is not followed elsewhere (no redirect, no proxy),
	// and what it says is read short and quoted.
	client := &http.Client{
		Transport:     &http.Transport{Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return "another program"
	}
	defer resp.Body.Close()
	if resp.Header.Get(wire.VersionHeader) == "" {
		return "another program"
	}
	var in Info
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 16<<10)).Decode(&in) != nil || in.PID == 0 {
		return "another memhost server (it asks for a token: memhost serve status names it in its home)"
	}
	home := in.Home
	if len(home) > 200 {
		home = home[:200] + "…"
	}
	return fmt.Sprintf("memhost serve of %q (pid %d)", home, in.PID)
}

// SocketPath is the unix socket of home's server (see sockpath.Of).
func SocketPath(home string) string { return sockpath.Of(home) }

// Canonical is home as servers and clients name it (sockpath.Canonical).
func Canonical(home string) string { return sockpath.Canonical(home) }

func lockPath(home string) string { return filepath.Join(home, "brain", "serve.lock") }

// StatePath is home's serve.json, TokenPath its default token file.
func StatePath(home string) string { return filepath.Join(home, "brain", "serve.json") }
func TokenPath(home string) string { return filepath.Join(home, "brain", "serve.token") }

// LogPath is where a detached server writes its log.
func LogPath(home string) string { return filepath.Join(Canonical(home), "brain", "serve.log") }
