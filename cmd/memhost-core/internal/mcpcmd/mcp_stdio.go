package mcpcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost/internal/jsoncheck"
	"github.com/memhost/memhost/mcp"
)

// maxMCPLine bounds one line of MCP on Stdin: tool calls carry at most 1 MB
// of content (mcp's limit), JSON escaping can double it.
const maxMCPLine = 16 << 20

// stdioTransport is memhost mcp's transport: newline-delimited JSON-RPC on
// in and out, as the SDK's IOTransport, but a line that is not a JSON-RPC
// message memhost can take gets JSON-RPC's error and the session goes on.
// The SDK's transport ends the whole session on such a line (a batch,
// "jsonrpc": "1.0", an object id), losing the answers already due; the
// HTTP transport answers it and goes on, and so does this one.
type stdioTransport struct {
	in  io.Reader
	out io.Writer
}

var _ mcpsdk.Transport = (*stdioTransport)(nil)

// Connect starts reading in. The reading goroutine ends at the end of in
// or, after Close, at its next line.
func (t *stdioTransport) Connect(context.Context) (mcpsdk.Connection, error) {
	c := &stdioConn{id: mcp.NewConnID(), out: t.out, incoming: make(chan jsonrpc.Message), done: make(chan struct{}), closed: make(chan struct{})}
	go c.read(t.in)
	return c, nil
}

// stdioConn is one session on stdin and stdout. Its reader answers bad
// lines itself while the SDK writes its messages: both write whole lines
// under mu, so they never interleave.
type stdioConn struct {
	id  string // the connection's nonce for the ids of its tool calls (mcp.TagCall)
	mu  sync.Mutex
	out io.Writer

	incoming chan jsonrpc.Message // the messages read, to Read
	done     chan struct{}        // closed when reading ended, with err
	err      error

	closeOnce sync.Once
	closed    chan struct{}
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg := <-c.incoming:
		return msg, nil
	case <-c.done:
		return nil, c.err
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	return c.writeLine(data)
}

// Close ends the session; stdin is not closed (it is not the session's).
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *stdioConn) writeLine(data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// read reads in line by line, passing the messages on to Read and
// answering the other lines, until in ends or the session is closed.
func (c *stdioConn) read(in io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(br, maxMCPLine)
		if errors.Is(err, errLineTooLong) {
			err = c.refuse(rpcError{code: jsonrpc.CodeInvalidRequest,
				message: fmt.Sprintf("invalid request: a message of over %d MB", maxMCPLine>>20)})
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			msg, bad := checkMessage(line)
			switch {
			case bad != nil:
				if werr := c.refuse(*bad); werr != nil {
					err = werr
				}
			default:
				select {
				case c.incoming <- mcp.TagCall(msg, c.id):
				case <-c.closed:
					return
				}
			}
		}
		if err != nil {
			c.err = err
			return
		}
	}
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most max bytes, without its newline; the
// rest of a longer one is read and dropped, and errLineTooLong returned.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	long := false
	for {
		part, err := br.ReadSlice('\n')
		if !long {
			line = append(line, part...)
			long = len(line) > max+1 // the newline is not the message's
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			if err == nil {
				return nil, errLineTooLong
			}
			return nil, err // what the end cut short is no message anyway
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// rpcError is the error answer to a message that could not be taken: its
// id (nil, a string or an int64) and JSON-RPC's code.
type rpcError struct {
	id      any
	code    int64
	message string
}

func (c *stdioConn) refuse(e rpcError) error {
	data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": e.id,
		"error": map[string]any{"code": e.code, "message": e.message}})
	if err != nil {
		return err
	}
	return c.writeLine(data)
}

// checkMessage decodes a line as one JSON-RPC 2.0 message, or says why it
// is not one as JSON-RPC's error: parse error (-32700) for a line that is
// not JSON text (JSON is UTF-8), invalid request (-32600) for JSON that is
// not a message, invalid params (-32602) for text that is not Unicode in
// the params. The error has the message's id when it is a usable one (a
// string or an integer), else null. MCP has no batches since 2025-06-18:
// an array gets one error (as an empty batch does in JSON-RPC) and none of
// its messages run.
func checkMessage(line []byte) (jsonrpc.Message, *rpcError) {
	invalid := func(id any, format string, args ...any) (jsonrpc.Message, *rpcError) {
		return nil, &rpcError{id: id, code: jsonrpc.CodeInvalidRequest, message: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	switch {
	case !utf8.Valid(line):
		return nil, &rpcError{code: jsonrpc.CodeParseError, message: "parse error: the line is not UTF-8"}
	case !json.Valid(line):
		return nil, &rpcError{code: jsonrpc.CodeParseError, message: "parse error: the line is not JSON"}
	case line[0] == '[':
		return invalid(nil, "a batch (a JSON array); MCP has no batches since 2025-06-18: send each message on a line of its own")
	case line[0] != '{':
		return invalid(nil, "a message is a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return invalid(nil, "%v", err)
	}
	raw, hasID := m["id"]
	id, ok := usableID(raw)
	if hasID && !ok {
		return invalid(nil, "the id is %s: it must be a string or an integer", jsonKind(raw))
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return invalid(id, `"jsonrpc" must be "2.0"`)
	}
	method, hasMethod := m["method"]
	var name string
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch {
	case hasMethod && json.Unmarshal(method, &name) != nil:
		return invalid(id, "the method is %s: it must be a string", jsonKind(method))
	case !hasMethod && (id == nil || !hasResult && !hasError):
		return invalid(id, "a message needs a method (a request) or an id with a result or an error (a response)")
	}
	if s := jsoncheck.Find(line); s != nil {
		if s.Field() == "params" && id != nil {
			return nil, &rpcError{id: id, code: jsonrpc.CodeInvalidParams, message: "invalid params: " + s.Error()}
		}
		return invalid(id, "%v", s)
	}
	// The SDK's own decoding, last: what it refuses would end the session.
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return invalid(id, "%v", err)
	}
	return msg, nil
}

// usableID returns a message's id as an answer carries it: a string, an
// integer (exact as a float64, as the SDK keeps it) or nil for none or null.
func usableID(raw json.RawMessage) (any, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n > 1<<53 || n < -(1<<53) {
		return nil, false
	}
	return n, true
}

// jsonKind names the kind of a JSON value in an error, rather than quote
// what may be long.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case 'n':
		return "null"
	}
	if len(raw) > 24 {
		return "a long number"
	}
	return "the number " + string(raw)
}
