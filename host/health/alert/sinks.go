package alert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Command runs Argv (never through a shell) with a message's JSON on its
// stdin; a non-zero exit or passing Timeout fails the delivery, and at the
// timeout the command and every process it started are killed.
type Command struct {
	Argv    []string
	Timeout time.Duration
}

var _ Sink = Command{}

// Name is "command".
func (Command) Name() string { return "command" }

// Send runs the command once.
func (c Command) Send(ctx context.Context, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Stdin = bytes.NewReader(msg)
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: 500}
	cmd.WaitDelay = time.Second // a child holding stderr open cannot keep Send waiting
	// Its own process group, killed whole at the timeout: a shell
	// script's children would otherwise run on after it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: no answer within %v", c.Argv[0], c.Timeout)
		}
		if s := strings.TrimSpace(stderr.String()); s != "" {
			return fmt.Errorf("%s: %w: %s", c.Argv[0], err, s)
		}
		return fmt.Errorf("%s: %w", c.Argv[0], err)
	}
	return nil
}

// limited keeps the first n bytes written to it and discards the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if k := min(len(p), l.n); k > 0 {
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// Webhook POSTs a message's JSON to URL, which the home's owner
// configured. A redirect is followed only to the same host (and at most
// three times); any status but 2xx, or passing Timeout, fails.
type Webhook struct {
	URL     string
	Timeout time.Duration
}

var _ Sink = Webhook{}

// Name is "webhook".
func (Webhook) Name() string { return "webhook" }

var errOtherHost = errors.New("redirected to another host")

// Send posts the message once.
func (w Webhook) Send(ctx context.Context, msg []byte) error {
	client := &http.Client{Timeout: w.Timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != via[0].URL.Host {
			return fmt.Errorf("%w (%s)", errOtherHost, req.URL.Host)
		}
		if len(via) >= 3 {
			return errors.New("more than 3 redirects")
		}
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "memhost-health")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook answered %s", resp.Status)
	}
	return nil
}
