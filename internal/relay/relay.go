// Package relay is how the thin `memhost` launcher runs a command inside
// the home's server: it sends its arguments, environment and working
// folder, the server runs the very CLI code of memhost-core on them, and
// the launcher copies what comes back to its stdout and stderr and exits
// with the command's code. Output and exit codes are therefore the same as
// an in-process run by construction; what the launcher saves is starting a
// binary that links SQLite, gRPC and the rest (~25 ms here against ~5).
//
// The launcher opens the home's unix socket and sends
//
//	POST /api/v1/cli HTTP/1.1, Upgrade: memhost-cli, Memhost-Version: V
//
// and after "101 Switching Protocols" both sides speak frames: a type byte,
// a big-endian uint32 length, the payload.
//
//	launcher → server   'A' Hello (JSON), first and once
//	                    'I' stdin bytes, 'E' end of stdin (only after 'S')
//	server → launcher   'O' stdout bytes, 'R' stderr bytes
//	                    'S' the command reads stdin: send it
//	                    'X' exit code (uint32), last
//
// The launcher reads its stdin only when asked, so a command that reads
// none never blocks on a pipe that stays open. A connection that ends
// before 'X' means the server went away: the launcher runs the command
// in-process instead (memhost-core), as the CLI does.
package relay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Path, Upgrade: the request that opens a relay.
const (
	Path    = "/api/v1/cli"
	Upgrade = "memhost-cli"
)

// Frame types.
const (
	Hello    = 'A'
	Stdin    = 'I'
	StdinEOF = 'E'
	Stdout   = 'O'
	Stderr   = 'R'
	WantIn   = 'S'
	Exit     = 'X'
)

// HelloMsg is the command to run, as the launcher sees it.
type HelloMsg struct {
	Args       []string          `json:"args"` // os.Args, program name first
	Env        map[string]string `json:"env"`  // MEMHOST_* and HOME
	Cwd        string            `json:"cwd"`
	StdinPiped bool              `json:"stdinPiped"`
	StdoutTTY  bool              `json:"stdoutTTY"`
}

// MaxFrame bounds a frame's payload.
const MaxFrame = 1 << 20

// Write sends one frame.
func Write(w io.Writer, typ byte, payload []byte) error {
	if len(payload) > MaxFrame {
		return fmt.Errorf("relay frame of %d bytes", len(payload))
	}
	var h [5]byte
	h[0] = typ
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// Read reads one frame.
func Read(r io.Reader) (typ byte, payload []byte, err error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > MaxFrame {
		return 0, nil, errors.New("relay frame too large")
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(r, payload); err != nil {
		return 0, nil, err
	}
	return h[0], payload, nil
}

// Chunks writes p as frames of typ no larger than MaxFrame.
func Chunks(w io.Writer, typ byte, p []byte) error {
	for len(p) > 0 {
		n := min(len(p), MaxFrame)
		if err := Write(w, typ, p[:n]); err != nil {
			return err
		}
		p = p[n:]
	}
	return nil
}

// ExitRunLocally, as the exit code, tells the launcher to run the command
// in memhost-core itself (the server would read its configuration with
// other environment overrides); nothing was run.
const ExitRunLocally = 1 << 30

// ExitPayload is the payload of an Exit frame.
func ExitPayload(code int) []byte {
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], uint32(code))
	return c[:]
}

// ExitCode reads an Exit frame's payload.
func ExitCode(p []byte) (int, error) {
	if len(p) != 4 {
		return 0, errors.New("bad exit frame")
	}
	return int(binary.BigEndian.Uint32(p)), nil
}
