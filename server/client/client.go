package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost/api"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/internal/sockpath"
	"github.com/memhost/memhost/internal/version"
	"github.com/memhost/memhost/server/state"
	"github.com/memhost/memhost/server/wire"
)

// ErrNoServer means no server runs for the home (no socket, or nothing
// listening on it).
var ErrNoServer = errors.New("no memhost server runs for this home")

// UnreachableError means the server stopped answering in the middle of a
// request: it was killed or crashed. A write may or may not have happened.
type UnreachableError struct{ Err error }

func (e *UnreachableError) Error() string {
	return "the memhost server stopped answering: " + e.Err.Error()
}
func (e *UnreachableError) Unwrap() error { return e.Err }

// Client calls a home's server through its unix socket. Its methods are
// the host operations with the same requests, responses and error kinds,
// so that a caller cannot tell it from a *host.Host but for speed.
type Client struct {
	// Func runs every operation of the table by posting it (forward);
	// PullModel and FedSync, whose answers are not one JSON value, are
	// methods of their own.
	api.Func
	hc      *http.Client
	base    string
	version string
	home    string
	env     string // EnvFingerprint of the client's overrides; "" sends none
}

// Dial connects to home's server, or returns ErrNoServer when none runs.
// It costs one connect on the socket. env is the client's
// config.Overrides; requests fail with a conflict on field "env"
// (ErrEnvDiffers) when the server's differ.
func Dial(home string, env []string) (*Client, error) {
	sock := state.SocketPath(home)
	conn, err := sockpath.Dial(home, time.Second)
	if err != nil {
		return nil, ErrNoServer // no file, a file no server listens on, another user's
	}
	first := make(chan net.Conn, 1) // the probe's connection serves the first request
	first <- conn
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			select {
			case c := <-first:
				return c, nil
			default:
			}
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", sock)
			if err == nil {
				if err = sockpath.CheckPeer(c); err != nil {
					c.Close()
				}
			}
			return c, err
		},
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
	return newClient(&Client{hc: &http.Client{Transport: tr}, base: "http://memhost", version: version.String(), home: state.Canonical(home), env: envHeader(env)}), nil
}

// envHeader is the Memhost-Env a client sends: none without overrides
// given (nil), so that such a client is never refused.
func envHeader(env []string) string {
	if env == nil {
		return ""
	}
	return wire.EnvFingerprint(env)
}

// NewClient calls a server at base (http://127.0.0.1:4321) through hc;
// used by tests and tools that reach a server over TCP.
func NewClient(base string, hc *http.Client) *Client {
	return newClient(&Client{hc: hc, base: strings.TrimSuffix(base, "/"), version: version.String()})
}

func newClient(c *Client) *Client {
	c.Func = c.forward
	return c
}

// Close drops the client's idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

var _ api.API = (*Client)(nil)

// forward posts op's request to the server and decodes its answer.
func (c *Client) forward(ctx context.Context, op api.Operation, req any) (any, error) {
	resp := op.NewResponse()
	if err := c.call(ctx, op.Info().Path(), req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// checker is a request that can tell it is invalid before it is sent.
type checker interface{ Check() error }

// call posts req to path and decodes the answer into resp, a pointer.
func (c *Client) call(ctx context.Context, path string, req, resp any) error {
	if ch, ok := req.(checker); ok {
		if err := ch.Check(); err != nil {
			return err
		}
	}
	if err := checkUTF8(reflect.ValueOf(req), ""); err != nil {
		return err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fault.BadInputf("", "request cannot be sent: %v", err)
	}
	r, err := c.do(ctx, http.MethodPost, path, body, "")
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if err := readError(r); err != nil {
		return err
	}
	if err := json.NewDecoder(r.Body).Decode(resp); err != nil {
		return &UnreachableError{fmt.Errorf("reading the answer: %w", err)}
	}
	return nil
}

// checkUTF8 refuses a request holding a string that is not UTF-8: JSON
// would silently replace the bad bytes (U+FFFD), and the server would
// store what the caller did not send. The error names the field as the
// host does ("text is not valid UTF-8").
func checkUTF8(v reflect.Value, name string) error {
	switch v.Kind() {
	case reflect.String:
		if !utf8.ValidString(v.String()) {
			return fault.BadInputf(name, "%s is not valid UTF-8", name)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.String {
			for i := range v.Len() {
				if err := checkUTF8(v.Index(i), name); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			if err := checkUTF8(iter.Key(), name); err != nil {
				return err
			}
			if err := checkUTF8(iter.Value(), name); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || tag == "-" {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			if err := checkUTF8(v.Field(i), tag); err != nil {
				return err
			}
		}
	}
	return nil
}

// do sends one request; transport failures are UnreachableError, a
// cancelled ctx is the context's error.
func (c *Client) do(ctx context.Context, method, path string, body []byte, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(wire.VersionHeader, c.version)
	if c.env != "" {
		req.Header.Set(wire.EnvHeader, c.env)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	r, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &UnreachableError{err}
	}
	return r, nil
}

// readError returns the error an answer carries, nil for a 2xx answer.
func readError(r *http.Response) error {
	if r.StatusCode/100 == 2 {
		return nil
	}
	var eb wire.Body
	b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err := json.Unmarshal(b, &eb); err != nil || eb.Error.Kind == "" {
		return &fault.Error{Kind: fault.Internal, Message: fmt.Sprintf("server answered %s: %s", r.Status, strings.TrimSpace(string(b)))}
	}
	return eb.Error.Err()
}

// The host operations.

// PullModel downloads a model on the server, calling req.Progress as the
// server reports progress.
func (c *Client) PullModel(ctx context.Context, req memhost.PullModelRequest) (memhost.PullResponse, error) {
	var resp memhost.PullResponse
	body, err := json.Marshal(req)
	if err != nil {
		return resp, err
	}
	r, err := c.do(ctx, http.MethodPost, "/api/v1/models/pull", body, "application/x-ndjson")
	if err != nil {
		return resp, err
	}
	defer r.Body.Close()
	if err := readError(r); err != nil {
		return resp, err
	}
	dec := json.NewDecoder(bufio.NewReader(r.Body))
	for {
		var line struct {
			Progress *struct{ Done, Total int64 } `json:"progress"`
			Result   *memhost.PullResponse        `json:"result"`
			Error    *wire.Error                  `json:"error"`
		}
		if err := dec.Decode(&line); err != nil {
			return resp, &UnreachableError{fmt.Errorf("reading the download's progress: %w", err)}
		}
		switch {
		case line.Progress != nil && req.Progress != nil:
			req.Progress(line.Progress.Done, line.Progress.Total)
		case line.Result != nil:
			return *line.Result, nil
		case line.Error != nil:
			return resp, line.Error.Err()
		}
	}
}

// state.Info asks the server about itself.
func (c *Client) Info(ctx context.Context) (state.Info, error) {
	var in state.Info
	r, err := c.do(ctx, http.MethodGet, "/api/v1/server", nil, "")
	if err != nil {
		return in, err
	}
	defer r.Body.Close()
	if err := readError(r); err != nil {
		return in, err
	}
	return in, json.NewDecoder(r.Body).Decode(&in)
}

// Stop asks the server to stop; it returns once the server said it will.
func (c *Client) Stop(ctx context.Context) error {
	r, err := c.do(ctx, http.MethodPost, "/api/v1/server/stop", nil, "")
	if err != nil {
		return err
	}
	defer r.Body.Close()
	return readError(r)
}

// Events calls fn with each event the server publishes until ctx ends or
// the server goes (then the error is an UnreachableError).
func (c *Client) Events(ctx context.Context, fn func(wire.Event)) error {
	r, err := c.do(ctx, http.MethodGet, "/api/v1/events", nil, "text/event-stream")
	if err != nil {
		return err
	}
	defer r.Body.Close()
	if err := readError(r); err != nil {
		return err
	}
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ev wire.Event
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			ev.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = json.RawMessage(strings.TrimPrefix(line, "data: "))
		case line == "" && ev.Type != "":
			fn(ev)
			ev = wire.Event{}
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	err = sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return &UnreachableError{err}
}
