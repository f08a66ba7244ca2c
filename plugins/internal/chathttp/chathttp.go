// Package chathttp is what memhost's generator plugins share: a JSON
// request over HTTP, retried with backoff when the service is busy or
// down (429, 5xx, no connection), honouring Retry-After, each attempt
// with a timeout, within the caller's context.
package chathttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/memhost/memhost/sdk"
)

// Client sends JSON requests to one service.
type Client struct {
	// Service names the service in errors, e.g. "Ollama at http://...".
	Service string
	// Timeout bounds one attempt. Default 2 minutes.
	Timeout time.Duration
	// Retries is how many times a transient failure is retried. Default 0.
	Retries int
	// Backoff is the first wait between attempts, doubled each time up to
	// MaxWait. Default 500 ms.
	Backoff time.Duration
	// MaxWait caps every wait, a Retry-After's too. Default 30 s.
	MaxWait time.Duration
	// Header is sent with every request (Authorization, say). It is never
	// logged or put in an error.
	Header http.Header
	// Message extracts the service's error message from an error body;
	// nil uses the body's text.
	Message func(body []byte) string
	Log     hclog.Logger
}

// StatusError is an answer other than 200.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string { return fmt.Sprintf("answered %d: %s", e.Code, e.Message) }

// Transient reports whether the failure is worth retrying: the service
// is rate limiting (429) or failing (5xx).
func (e *StatusError) Transient() bool { return e.Code == http.StatusTooManyRequests || e.Code >= 500 }

// ErrUnreachable is what failures to connect or to get an answer in time
// are (errors.Is); their text says which, and ErrNoAnswer tells the
// second apart.
var ErrUnreachable = errors.New("not reachable")

// ErrNoAnswer is what a service that did not answer within the timeout is
// (errors.Is); it is ErrUnreachable too.
var ErrNoAnswer = errors.New("did not answer in time")

type unreachable struct {
	msg      string
	noAnswer bool // the service did not answer in time
}

func (e *unreachable) Error() string { return e.msg }
func (e *unreachable) Is(target error) bool {
	return target == ErrUnreachable || e.noAnswer && target == ErrNoAnswer
}

// Do sends body (nil for none) as JSON and decodes a 200 answer's JSON
// into out. A non-200 answer is a *StatusError; a malformed answer says
// so with its start. Transient failures are retried up to c.Retries
// times; the last failure is returned.
func (c *Client) Do(ctx context.Context, method, url string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	backoff := c.Backoff
	if backoff <= 0 {
		backoff = 500 * time.Millisecond
	}
	maxWait := c.MaxWait
	if maxWait <= 0 {
		maxWait = 30 * time.Second
	}
	for attempt := 0; ; attempt++ {
		data, wait, err := c.once(ctx, method, url, payload)
		if err == nil {
			if out == nil {
				return nil
			}
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("%s returned malformed JSON (%v): %.80q", c.Service, err, data)
			}
			return nil
		}
		var se *StatusError
		transient := errors.Is(err, ErrUnreachable) || errors.As(err, &se) && se.Transient()
		if !transient || attempt >= c.Retries || ctx.Err() != nil {
			return err
		}
		if wait <= 0 {
			wait = backoff
			backoff *= 2
		}
		wait = min(wait, maxWait)
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err // the wait would outlast the caller
		}
		if c.Log != nil {
			c.Log.Info("request failed; retrying", "service", c.Service, "attempt", attempt+1, "err", err.Error(), "in", wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

// once makes one attempt; wait is the answer's Retry-After, if any.
func (c *Client) once(ctx context.Context, method, url string, payload []byte) (data []byte, wait time.Duration, err error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, url, rd)
	if err != nil {
		return nil, 0, err
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		var ne net.Error
		if actx.Err() != nil || errors.As(err, &ne) && ne.Timeout() {
			return nil, 0, &unreachable{msg: fmt.Sprintf("%s did not answer within %v", c.Service, timeout), noAnswer: true}
		}
		return nil, 0, &unreachable{msg: fmt.Sprintf("%s is not reachable (%v)", c.Service, errors.Unwrap(err))}
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, &unreachable{msg: fmt.Sprintf("%s broke off its answer: %v", c.Service, err)}
	}
	if resp.StatusCode != http.StatusOK {
		msg := ""
		if c.Message != nil {
			msg = c.Message(data)
		}
		if msg == "" {
			msg = strings.TrimSpace(string(data))
		}
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return nil, retryAfter(resp.Header.Get("Retry-After")), &StatusError{Code: resp.StatusCode, Message: oneLine(msg, 300)}
	}
	return data, 0, nil
}

// retryAfter reads Retry-After: seconds, or an HTTP date.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// TimeoutOption parses a provider's timeout option: a duration such as
// 90s, or whole seconds.
func TimeoutOption(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		if secs, err2 := strconv.Atoi(v); err2 == nil {
			d, err = time.Duration(secs)*time.Second, nil
		}
	}
	if err != nil || d <= 0 {
		return 0, sdk.BadRequest("option timeout=%q: want a duration such as 90s", v)
	}
	return d, nil
}

// RetriesOption parses a provider's retries option: 0 to 10.
func RetriesOption(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 10 {
		return 0, sdk.BadRequest("option retries=%q: want 0..10", v)
	}
	return n, nil
}
