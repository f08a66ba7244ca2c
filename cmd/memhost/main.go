// Command memhost is the launcher of memhost-core, the CLI. When the home
// has a running `memhost serve`, it runs the command inside the server
// through the home's socket (see internal/relay): a few milliseconds,
// because this binary links almost nothing. Otherwise, and for commands
// that need no server (serve, eval, --no-server), it executes memhost-core,
// which sits beside it, with the same arguments.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/memhost/memhost/internal/relay"
	"github.com/memhost/memhost/internal/sockpath"
	"github.com/memhost/memhost/internal/version"
)

// maxStdin is what memhost-core reads from stdin at most (64 MB), kept to
// replay to memhost-core when the server goes away mid-command.
const maxStdin = 64 << 20

func main() {
	os.Exit(launch(os.Args))
}

func launch(args []string) int {
	home, ok := forwardable(args[1:])
	if !ok {
		return core(args, nil)
	}
	// A server may die after a write but before its answer; the command is
	// then run again in this process. The request id, the same both times,
	// lets the write be stored once (a turn appended keeps it as its id).
	var id [6]byte
	rand.Read(id[:])
	args = append([]string{args[0], "--request-id=" + hex.EncodeToString(id[:])}, args[1:]...)
	code, in, err := forward(home, args)
	if err == nil {
		return code
	}
	if !errors.Is(err, errNoServer) {
		fmt.Fprintf(os.Stderr, "memhost: warning: the memhost server stopped answering (%v); running in this process instead\n", err)
	}
	return core(args, in)
}

// forwardable finds the home of a command the server can run: not serve,
// eval or mcp (a long stdio session, which forwards each call itself), not
// with --no-server or MEMHOST_NO_SERVER.
func forwardable(args []string) (home string, ok bool) {
	if os.Getenv("MEMHOST_NO_SERVER") != "" {
		return "", false
	}
	cmd := ""
	for i := 0; i < len(args) && cmd == ""; i++ {
		a := args[i]
		switch {
		case a == "--no-server" || strings.HasPrefix(a, "--no-server="):
			return "", false
		case a == "--home" || a == "-home":
			if i+1 < len(args) {
				home = args[i+1]
				i++
			}
		case strings.HasPrefix(a, "--home=") || strings.HasPrefix(a, "-home="):
			_, home, _ = strings.Cut(a, "=")
		case strings.HasPrefix(a, "-"):
		default:
			cmd = a
		}
	}
	for _, a := range args { // --no-server may follow the command too
		if a == "--no-server" || strings.HasPrefix(a, "--no-server=") {
			return "", false
		}
	}
	switch cmd {
	case "", "serve", "eval", "mcp", "help", "h": // mcp: a session of its own, forwarding each call
		return "", false
	}
	if home == "" {
		home = os.Getenv("MEMHOST_HOME")
	}
	if home == "" {
		dir, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		home = filepath.Join(dir, ".memhost")
	}
	return home, true
}

var errNoServer = errors.New("no server")

// stdinReader is the one reader of this process's stdin, started when the
// server asks for stdin. A sender hands what it reads to the server,
// keeping a copy (up to maxStdin) first, so that if the server goes away
// memhost-core can be given all of it: what was sent, then the rest.
type stdinReader struct {
	mu     sync.Mutex
	kept   bytes.Buffer
	chunks chan []byte   // from stdin; closed at its end
	quit   chan struct{} // closed: the sender stops
	sent   chan struct{} // closed when the sender has stopped
}

func readStdin() *stdinReader {
	s := &stdinReader{chunks: make(chan []byte, 16), quit: make(chan struct{}), sent: make(chan struct{})}
	go func() {
		defer close(s.chunks)
		for {
			buf := make([]byte, 64<<10)
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				s.chunks <- buf[:n]
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// send hands stdin to send until its end, a failed send or rest.
func (s *stdinReader) send(send func(typ byte, p []byte) error) {
	defer close(s.sent)
	for {
		select {
		case p, ok := <-s.chunks:
			if !ok {
				send(relay.StdinEOF, nil)
				return
			}
			s.mu.Lock()
			if s.kept.Len() <= maxStdin {
				s.kept.Write(p) // before sending: a failed send loses nothing
			}
			s.mu.Unlock()
			if send(relay.Stdin, p) != nil {
				return
			}
		case <-s.quit:
			return
		}
	}
}

// rest stops the sender and returns what it took followed by what stdin
// still holds.
func (s *stdinReader) rest() io.Reader {
	close(s.quit)
	<-s.sent
	s.mu.Lock()
	kept := append([]byte(nil), s.kept.Bytes()...)
	s.mu.Unlock()
	pr, pw := io.Pipe()
	go func() {
		for p := range s.chunks {
			if _, err := pw.Write(p); err != nil {
				return
			}
		}
		pw.Close()
	}()
	return io.MultiReader(bytes.NewReader(kept), pr)
}

// forward runs the command in the home's server. errNoServer: nothing was
// run (no server, another version, or the server asks this process to run
// it). Another error: the server went away before the command ended; in
// then replays stdin to whoever runs it next.
func forward(home string, args []string) (code int, in *stdinReader, err error) {
	cwd, _ := os.Getwd()
	hello := relay.HelloMsg{Args: args, Env: map[string]string{}, Cwd: cwd,
		StdinPiped: notTTY(os.Stdin), StdoutTTY: !notTTY(os.Stdout)}
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "MEMHOST_") || k == "HOME" || k == "TZ" {
			hello.Env[k] = v
		}
	}
	// JSON carries text: bytes that are not UTF-8 (a file name, an
	// argument) would arrive changed. memhost-core gets them as they are.
	for _, v := range append(append([]string{cwd}, args...), mapValues(hello.Env)...) {
		if !utf8.ValidString(v) {
			return 0, nil, errNoServer
		}
	}
	conn, err := sockpath.Dial(home, time.Second)
	if err != nil {
		return 0, nil, errNoServer
	}
	defer conn.Close()
	// A server that accepts but does not answer (stopped) must not hang
	// the command: the handshake has a deadline.
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: memhost\r\nConnection: Upgrade\r\nUpgrade: %s\r\nMemhost-Version: %s\r\nContent-Length: 0\r\n\r\n",
		relay.Path, relay.Upgrade, version.String())
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil {
		return 0, nil, errNoServer
	}
	for { // the headers
		l, err := br.ReadString('\n')
		if err != nil {
			return 0, nil, errNoServer
		}
		if l == "\r\n" {
			break
		}
	}
	if !strings.Contains(status, " 101 ") {
		// Another version, a server stopping, or one without the relay:
		// memhost-core talks to it through the API and says what is wrong.
		return 0, nil, errNoServer
	}
	conn.SetDeadline(time.Time{})
	b, _ := json.Marshal(hello)
	var wmu sync.Mutex // frames from this goroutine and the stdin sender
	send := func(typ byte, p []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return relay.Write(conn, typ, p)
	}
	if err := send(relay.Hello, b); err != nil {
		return 0, nil, errNoServer
	}
	// Ctrl-C (or SIGTERM) ends the command as it ends one in-process: the
	// server sees this side close, cancels the command, and its exit code
	// comes back. A second signal leaves at once.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		<-sigs
		if uc, ok := conn.(*net.UnixConn); ok {
			uc.CloseWrite()
		}
		<-sigs
		os.Exit(130)
	}()
	started := false
	for {
		typ, p, err := relay.Read(br)
		if err != nil {
			return 0, in, err
		}
		switch typ {
		case relay.Stdout:
			os.Stdout.Write(p)
		case relay.Stderr:
			os.Stderr.Write(p)
		case relay.WantIn:
			if !started {
				started = true
				in = readStdin()
				go in.send(send)
			}
		case relay.Exit:
			code, err := relay.ExitCode(p)
			switch {
			case err != nil:
				return 0, in, err
			case code == relay.ExitRunLocally && !started:
				return 0, nil, errNoServer
			}
			return code, nil, nil
		}
	}
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// notTTY reports whether f is a pipe or file rather than a terminal.
func notTTY(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice == 0
}

// core runs memhost-core with args. With in not nil (the stdin a server
// that went away had started to read), memhost-core reads what was read
// and then the rest.
func core(args []string, in *stdinReader) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "memhost:", err)
		return 1
	}
	path := filepath.Join(filepath.Dir(exe), "memhost-core")
	if in == nil {
		// Replace this process: signals, stdin and the exit code are
		// memhost-core's own.
		err := syscall.Exec(path, append([]string{path}, args[1:]...), os.Environ())
		fmt.Fprintf(os.Stderr, "memhost: cannot run %s: %v (memhost-core must sit beside memhost)\n", path, err)
		return 1
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Stdin = in.rest()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "MEMHOST_NO_SERVER=1")
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "memhost: cannot run %s: %v\n", path, err)
		return 1
	}
	return 0
}
