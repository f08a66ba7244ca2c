// Package auth decides who may call the API, by listener: the TCP
// listener's guard (what browsers say of a request's origin, bearer token,
// loopback Host and Origin checks, the dashboard's key), the API's token
// file, and the routes served on the unix socket only. It may import
// fault and server/wire; nothing of server.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server/wire"
)

// Who may call the API, by listener:
//   - the unix socket: whoever can open it (mode 0600: the home's owner);
//   - TCP on a loopback address: programs of this machine, but not web
//     pages a browser shows, which could otherwise reach 127.0.0.1 too:
//     the Host header must name a loopback host (DNS rebinding), and a
//     request from a page of another origin is refused;
//   - TCP on any other address: the bearer token only.
//
// On every TCP listener, a request a browser says comes from a page of
// another origin is refused first (crossOrigin), token or not.

// BootPage writes what a navigation to the dashboard gets when the server
// asks for a token and the request carries no key (dashboard.Boot): the
// page whose script loads the dashboard with the key from its origin's
// storage. key, when not "", is the key for that storage (the address held
// the token); message says how to open the dashboard when the browser holds
// no key.
type BootPage func(w http.ResponseWriter, status int, key, message string)

// Guard wraps h with the checks of a TCP listener: token, when not empty,
// is required as "Authorization: Bearer TOKEN" (or, from the dashboard's
// script, its key: dashKey), and boot answers the dashboard's navigations
// that carry neither.
func Guard(h http.Handler, token string, boot BootPage) http.Handler {
	dash := newDashKey()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(wire.VersionHeader, version.String())
		r = r.WithContext(context.WithValue(r.Context(), overTCPKey{}, true))
		if err := crossOrigin(r); err != nil {
			wire.WriteError(w, err)
			return
		}
		if token != "" {
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) != 1 {
				if dash.auth(w, r, token, boot) { // the dashboard's key, or an answer
					return
				}
			}
		} else {
			if !loopbackHost(r.Host) {
				wire.WriteError(w, &fault.Error{Kind: fault.Outside, Field: "Host", Message: fmt.Sprintf("host %q is not this machine's loopback address", r.Host)})
				return
			}
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				wire.WriteError(w, &fault.Error{Kind: fault.Outside, Field: "Origin", Message: fmt.Sprintf("requests from pages of %s are refused", o)})
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// crossOrigin refuses what a page of another origin makes a browser send,
// by what the browser says of the request (fetch metadata): Sec-Fetch-Site
// "cross-site" (another site) or "same-site" (another origin of this site:
// a page on another port of 127.0.0.1 is one) — an image, a script's
// fetch, a form, a frame, a link followed, with or without a credential,
// GETs included: the Origin check alone misses an image's, a link's or a
// form's GET, which carry no Origin. Served are "same-origin" (the
// dashboard's own pages, links and calls) and "none" (the address bar, a
// bookmark, a link opened from another program). A link to the dashboard
// on another site's page is refused too: the page it opens runs the
// dashboard's script, which makes calls of its own. Requests without fetch
// metadata — programs (curl, the CLI, MCP clients) and browsers too old to
// send it — are left to the Origin check and the token; such a browser
// sends the dashboard's key to no other origin either.
func crossOrigin(r *http.Request) error {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
		return nil
	default:
		return &fault.Error{Kind: fault.Outside, Field: "Sec-Fetch-Site", Message: fmt.Sprintf("requests made by pages of other origins are refused (Sec-Fetch-Site: %s): open the address from the address bar", site)}
	}
}

// A browser cannot send the bearer token, so the dashboard takes it once
// from the address: a GET of a dashboard page with ?token=TOKEN (what
// `memhost serve` prints) answers the page that loads the dashboard
// (BootPage) holding the dashboard's key; its script keeps the key in the
// origin's storage (localStorage: scheme, host and port), takes the token
// out of the address and sends the key as the header KeyHeader with every
// call it makes — the page's own address again, drawn in place of the boot
// page, and the API calls of the dashboard's script. A navigation without
// the key (a link, the address bar, a reload) gets the boot page again,
// which does the same with the key it finds in the storage.
//
// No cookie: cookies have no port, so a cookie of 127.0.0.1:4321 reaches
// every server of 127.0.0.1 the browser visits, whoever runs it, which could
// replay it with any header it likes. The origin's storage is read by the
// dashboard's own script only; no other origin's page, and no other
// server, ever receives the key. Nor is the key the token: it is a secret
// of this run of the server (32 random bytes, in memory only, never
// written to the home), which
//   - is no bearer token: the API, MCP and the CLI refuse it;
//   - opens the dashboard only: its pages (GET /, /ui/...) and the API
//     calls its script makes (dashPaths), nothing else;
//   - dies with the server: after a restart the dashboard says to open
//     the token address again.
//
// EventSource sends no header of the page's, so the event streams
// (/api/v1/events, a rebuild's events) take the key in their address
// (?key=): a GET to the same origin, on those two routes only.

// KeyHeader carries the dashboard's key in its script's calls.
const KeyHeader = "Memhost-Dashboard-Key"

// keyParam carries the key in the address of an event stream.
const keyParam = "key"

// dashKey is the dashboard's key of one run of a server.
type dashKey struct{ secret string }

func newDashKey() *dashKey {
	buf := make([]byte, 32)
	rand.Read(buf)
	return &dashKey{secret: hex.EncodeToString(buf)}
}

// dashPaths reports whether the dashboard's key opens path: the
// dashboard's pages and the API routes of its script (static/app.js).
func dashPaths(path string) bool {
	switch path {
	case "/", "/api/v1/events", "/api/v1/models/rm", "/api/v1/models/pull", "/api/debug/memory/rebuild":
		return true
	}
	return strings.HasPrefix(path, "/ui/") || strings.HasPrefix(path, "/api/debug/memory/rebuild/")
}

// eventStream reports whether path is an event stream, whose key comes in
// its address.
func eventStream(path string) bool {
	return path == "/api/v1/events" || strings.HasPrefix(path, "/api/debug/memory/rebuild/") && strings.HasSuffix(path, "/events")
}

// dashPage reports whether path is a page of the dashboard (not its
// script's calls, not its static files).
func dashPage(path string) bool {
	return path == "/" || strings.HasPrefix(path, "/ui/") && !strings.HasPrefix(path, "/ui/api/") && !strings.HasPrefix(path, "/ui/static/")
}

// auth serves r when it carries the dashboard's key (or answers the boot
// page, with the key when the address holds the token), and reports
// whether it answered.
func (d *dashKey) auth(w http.ResponseWriter, r *http.Request, token string, boot BootPage) bool {
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	key := r.Header.Get(KeyHeader)
	if key == "" && read && eventStream(r.URL.Path) {
		key = r.URL.Query().Get(keyParam)
	}
	if key != "" && subtle.ConstantTimeCompare([]byte(key), []byte(d.secret)) == 1 {
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			wire.WriteError(w, &fault.Error{Kind: fault.Outside, Field: "Origin", Message: fmt.Sprintf("requests from pages of %s are refused", o)})
			return true
		}
		if !dashPaths(r.URL.Path) {
			wire.WriteError(w, &fault.Error{Kind: wire.KindUnauthorized, Message: fmt.Sprintf("%s needs the bearer token: the dashboard's key opens the dashboard only", r.URL.Path)})
			return true
		}
		return false // authenticated: the caller serves it
	}
	if read && strings.HasPrefix(r.URL.Path, "/ui/static/") {
		return false // the dashboard's style and scripts: the boot page needs them, and they hold nothing of the home
	}
	page := read && key == "" && dashPage(r.URL.Path) // a navigation: the browser sent no header of ours
	q := r.URL.Query()
	if page && q.Has("token") && subtle.ConstantTimeCompare([]byte(q.Get("token")), []byte(token)) == 1 {
		boot(w, http.StatusOK, d.secret, "")
		return true
	}
	msg := "missing or wrong bearer token (a browser opens the dashboard once as /?token=TOKEN, the token file's content)"
	if key != "" {
		msg = "the dashboard's key is not this server's (the server restarted since the page got it): open the dashboard as /?token=TOKEN again, TOKEN the token file's content"
	}
	if page {
		w.Header().Set("WWW-Authenticate", `Bearer realm="memhost"`)
		boot(w, http.StatusUnauthorized, "", msg)
		return true
	}
	wire.WriteError(w, &fault.Error{Kind: wire.KindUnauthorized, Message: msg})
	return true
}

// loopbackHost reports whether a Host header names this machine:
// localhost or a loopback IP, with any port.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sameOrigin(origin, host string) bool {
	o, ok := strings.CutPrefix(origin, "http://")
	return ok && strings.EqualFold(o, host)
}

// IsLoopback reports whether a listen address binds loopback only.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoadToken reads the token file, or creates it (32 random bytes, hex,
// mode 0600) when it does not exist. A token file others may read is
// refused.
func LoadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		buf := make([]byte, 32)
		rand.Read(buf)
		tok := hex.EncodeToString(buf)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return "", fmt.Errorf("token file %s: %w", path, err)
		}
		if _, err := f.WriteString(tok + "\n"); err != nil {
			f.Close()
			return "", fmt.Errorf("token file %s: %w", path, err)
		}
		return tok, f.Close()
	}
	if err != nil {
		return "", fmt.Errorf("token file %s: %w", path, err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return "", fault.BadInputf("tokenFile", "token file %s can be read by others (mode %o); chmod 600 it", path, fi.Mode().Perm())
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return "", fault.BadInputf("tokenFile", "token in %s is shorter than 16 characters", path)
	}
	return tok, nil
}

type overTCPKey struct{}

// OverTCP reports whether a request came through a TCP listener rather
// than the unix socket.
func OverTCP(r *http.Request) bool { return r.Context().Value(overTCPKey{}) != nil }

// SocketOnly serves h on the unix socket only: operations that read files
// the request names (transcripts to ingest, a hook's transcript_path, a
// model file) would let anyone who reaches the TCP port — on loopback,
// every user of the machine — read the server's user's files. The socket
// is the home owner's alone (mode 0600).
func SocketOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if OverTCP(r) {
			wire.WriteError(w, RefuseFiles())
			return
		}
		h.ServeHTTP(w, r)
	})
}

// RefuseFiles is the error of a request over TCP that names files for the
// server to read.
func RefuseFiles() error {
	return &fault.Error{Kind: fault.Outside, Message: "this request names files for the server to read: send it through the unix socket (brain/serve.sock)"}
}
