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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

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
	code, stdin, err := forward(home, args)
	if err == nil {
		return code
	}
	if !errors.Is(err, errNoServer) {
		fmt.Fprintf(os.Stderr, "memhost: warning: the memhost server stopped answering (%v); running in this process instead\n", err)
	}
	return core(args, stdin)
}

// forwardable finds the home of a command the server can run: not serve
// or eval, not with --no-server or MEMHOST_NO_SERVER.
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
	case "", "serve", "eval", "help", "h":
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

// forward runs the command in the home's server. errNoServer: none
// answered, nothing happened. Another error: the server went away before
// the command ended; stdin holds what was read of stdin.
func forward(home string, args []string) (code int, stdin []byte, err error) {
	conn, err := net.DialTimeout("unix", sockpath.Of(home), time.Second)
	if err != nil {
		return 0, nil, errNoServer
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: memhost\r\nConnection: Upgrade\r\nUpgrade: %s\r\nMemhost-Version: %s\r\nContent-Length: 0\r\n\r\n",
		relay.Path, relay.Upgrade, version.String())
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil {
		return 0, nil, errNoServer // a socket nobody serves well: let memhost-core see
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
		// Another version, or a server without the relay: memhost-core
		// talks to it through the API and says what is wrong.
		return 0, nil, errNoServer
	}
	cwd, _ := os.Getwd()
	hello := relay.HelloMsg{Args: args, Env: map[string]string{}, Cwd: cwd,
		StdinPiped: notTTY(os.Stdin), StdoutTTY: !notTTY(os.Stdout)}
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "MEMHOST_") || k == "HOME" {
			hello.Env[k] = v
		}
	}
	b, _ := json.Marshal(hello)
	var wmu sync.Mutex // frames from this goroutine and the stdin copier
	send := func(typ byte, p []byte) error {
		wmu.Lock()
		defer wmu.Unlock()
		return relay.Write(conn, typ, p)
	}
	if err := send(relay.Hello, b); err != nil {
		return 0, nil, errNoServer
	}
	var (
		kept     bytes.Buffer // stdin sent, for a replay
		keptMu   sync.Mutex
		started  bool
		copyDone = make(chan struct{})
	)
	copyStdin := func() {
		defer close(copyDone)
		buf := make([]byte, 64<<10)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				keptMu.Lock()
				if kept.Len() < maxStdin+1 {
					kept.Write(buf[:n])
				}
				keptMu.Unlock()
				if send(relay.Stdin, buf[:n]) != nil {
					return
				}
			}
			if err != nil {
				send(relay.StdinEOF, nil)
				return
			}
		}
	}
	stdinSoFar := func() []byte {
		if !started {
			return nil
		}
		keptMu.Lock()
		defer keptMu.Unlock()
		return append([]byte(nil), kept.Bytes()...)
	}
	for {
		typ, p, err := relay.Read(br)
		if err != nil {
			if started {
				// Let the copier finish what stdin holds, for the replay.
				select {
				case <-copyDone:
				case <-time.After(2 * time.Second):
				}
			}
			return 0, stdinSoFar(), err
		}
		switch typ {
		case relay.Stdout:
			os.Stdout.Write(p)
		case relay.Stderr:
			os.Stderr.Write(p)
		case relay.WantIn:
			if !started {
				started = true
				go copyStdin()
			}
		case relay.Exit:
			code, err := relay.ExitCode(p)
			if err != nil {
				return 0, stdinSoFar(), err
			}
			return code, nil, nil
		}
	}
}

// notTTY reports whether f is a pipe or file rather than a terminal.
func notTTY(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice == 0
}

// core runs memhost-core with args. With stdin not nil (what a server
// that went away had read), that is its stdin, followed by the rest.
func core(args []string, stdin []byte) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "memhost:", err)
		return 1
	}
	path := filepath.Join(filepath.Dir(exe), "memhost-core")
	if stdin == nil {
		// Replace this process: signals, stdin and the exit code are
		// memhost-core's own.
		err := syscall.Exec(path, append([]string{path}, args[1:]...), os.Environ())
		fmt.Fprintf(os.Stderr, "memhost: cannot run %s: %v (memhost-core must sit beside memhost)\n", path, err)
		return 1
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Stdin = io.MultiReader(bytes.NewReader(stdin), os.Stdin)
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
