// Package auth decides who may call the API, by listener: the TCP
// listener's guard (bearer token, loopback Host and Origin checks, the
// dashboard's cookie), the API's token file, and the routes served on the
// unix socket only. It may import host/fault and server/wire; nothing of
// server.
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

	"github.com/memhost/memhost/host/fault"
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

// Guard wraps h with the checks of a TCP listener: token, when not empty,
// is required as "Authorization: Bearer TOKEN" (or, from a browser, the
// dashboard's cookie: browserAuth).
func Guard(h http.Handler, token string) http.Handler {
	dash := newDashCookie()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(wire.VersionHeader, version.String())
		r = r.WithContext(context.WithValue(r.Context(), overTCPKey{}, true))
		if token != "" {
			scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
			if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) != 1 {
				if dash.auth(w, r, token) { // the dashboard's cookie, or an answer
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

// A browser cannot send the bearer token, so the dashboard's pages take it
// once from the address: GET /?token=TOKEN (what `memhost serve` prints)
// sets a cookie and redirects to the address without it; later requests,
// the dashboard's and its scripts' calls of the API alike, carry the
// cookie. A request authenticated by the cookie that comes from a page of
// another origin is refused, as on loopback.
//
// What the browser holds is never the token. Cookies have no port: the
// browser sends the cookie of 127.0.0.1:4321 to every server of
// 127.0.0.1 it visits, whoever runs it. So the cookie holds a secret of
// this run of the server alone (32 random bytes, in memory only, never
// written to the home), which:
//   - is no bearer token: the API, MCP and the CLI refuse it;
//   - opens the dashboard only: its pages (GET /, /ui/...) and the API
//     calls its scripts make (dashCookiePaths), nothing else;
//   - dies with the server: after a restart the dashboard answers 401
//     and the user opens the token address again.
//
// The cookie is HttpOnly (no script reads it), SameSite=Strict (no other
// site's page makes the browser send it) and Path=/. It is not Secure and
// not named __Host-: the server speaks plain HTTP, and browsers refuse a
// Secure cookie set over HTTP (localhost aside) and every __Host- cookie
// that is not Secure. (__Host- would not scope it to a port anyway.)

// dashCookie is the dashboard's cookie of one run of a server.
type dashCookie struct{ secret string }

func newDashCookie() *dashCookie {
	buf := make([]byte, 32)
	rand.Read(buf)
	return &dashCookie{secret: hex.EncodeToString(buf)}
}

// dashCookieName names the cookie of the server at host: two servers of
// one machine (other ports) would otherwise overwrite each other's.
func dashCookieName(host string) string {
	_, port, _ := net.SplitHostPort(host)
	return "memhost-dashboard-" + port
}

// dashCookiePaths reports whether the dashboard's cookie opens path: the
// dashboard's pages and the API routes of its script (static/app.js).
func dashCookiePaths(path string) bool {
	switch path {
	case "/", "/api/v1/events", "/api/v1/models/rm", "/api/v1/models/pull", "/api/debug/memory/rebuild":
		return true
	}
	return strings.HasPrefix(path, "/ui/") || strings.HasPrefix(path, "/api/debug/memory/rebuild/")
}

// auth serves r when it carries the dashboard's cookie (or sets the
// cookie from ?token= on a GET, and redirects), and reports whether it
// answered.
func (d *dashCookie) auth(w http.ResponseWriter, r *http.Request, token string) bool {
	name := dashCookieName(r.Host)
	c, err := r.Cookie(name)
	if err == nil && subtle.ConstantTimeCompare([]byte(c.Value), []byte(d.secret)) == 1 {
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			wire.WriteError(w, &fault.Error{Kind: fault.Outside, Field: "Origin", Message: fmt.Sprintf("requests from pages of %s are refused", o)})
			return true
		}
		if !dashCookiePaths(r.URL.Path) {
			wire.WriteError(w, &fault.Error{Kind: wire.KindUnauthorized, Message: fmt.Sprintf("%s needs the bearer token: the dashboard's cookie opens the dashboard only", r.URL.Path)})
			return true
		}
		return false // authenticated: the caller serves it
	}
	q := r.URL.Query()
	if r.Method == http.MethodGet && q.Has("token") && subtle.ConstantTimeCompare([]byte(q.Get("token")), []byte(token)) == 1 {
		http.SetCookie(w, &http.Cookie{Name: name, Value: d.secret, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del("token")
		u := *r.URL
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
		return true
	}
	msg := "missing or wrong bearer token (a browser opens the dashboard once as /?token=TOKEN, the token file's content)"
	if err == nil {
		msg = "the dashboard's cookie is not this server's (the server restarted since it was set): open the dashboard as /?token=TOKEN again, TOKEN the token file's content"
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
