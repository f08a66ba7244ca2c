// Package fakellm holds what the fake chat servers (fakeollama's
// /api/chat, fakeopenai's /v1/chat/completions) share: a script of
// replies for tests to queue, and a stand-in "model" that answers a JSON
// schema with an instance of it. No model can run in the tests; the fakes
// speak the providers' documented APIs with these scripted answers.
package fakellm

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"time"
)

// Reply is one scripted answer to a chat request. The zero Reply is the
// default answer (see Default).
type Reply struct {
	Status     int           // HTTP status; 0 means 200
	RetryAfter string        // Retry-After header value, e.g. "1" (seconds)
	Error      string        // the provider's error message, for a Status >= 400
	Raw        string        // the body as is (malformed JSON, say), instead of an answer
	Content    string        // the answer's text; "" gives Default's
	Delay      time.Duration // before answering (a hung server: longer than the client waits)
	Truncated  bool          // the model stopped at its token limit (finish_reason/done_reason "length")
}

// Request is what the server received, decoded to the parts tests check.
type Request struct {
	Path     string
	Model    string
	Messages []Message
	Schema   json.RawMessage // the schema the client asked the answer to follow, if any
	Body     map[string]any  // the whole body
	Header   map[string]string
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Script is a queue of replies and a log of requests; safe for
// concurrent use.
type Script struct {
	mu       sync.Mutex
	replies  []Reply
	requests []Request
	// Answer, when set, computes the default answer's text (a scripted
	// "model"); nil means Default.
	answer func(Request) string
}

// Push queues replies, answered in order, one per request.
func (s *Script) Push(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// SetAnswer sets the function computing answers once the queue is empty.
func (s *Script) SetAnswer(fn func(Request) string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answer = fn
}

// Next records req and returns the reply for it, with Content filled.
func (s *Script) Next(req Request) Reply {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var r Reply
	if len(s.replies) > 0 {
		r, s.replies = s.replies[0], s.replies[1:]
	}
	answer := s.answer
	s.mu.Unlock()
	if r.Content == "" && r.Raw == "" && r.Status < 400 {
		if answer != nil {
			r.Content = answer(req)
		} else {
			r.Content = Default(req)
		}
	}
	return r
}

// Requests returns the requests received so far.
func (s *Script) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Pending is the number of queued replies not yet used.
func (s *Script) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

// Default is the stand-in model: with a schema, the smallest instance of
// it (Instance); without, "echo: " and the last user message.
func Default(req Request) string {
	if len(req.Schema) > 0 {
		b, _ := json.Marshal(Instance(req.Schema))
		return string(b)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return "echo: " + req.Messages[i].Content
		}
	}
	return "echo"
}

// Instance builds a value following a JSON schema: its enum's or const's
// first value, every property of an object (required or not), arrays of
// minItems items, strings of minLength "x"s. It knows the keywords memhost's
// schemas use; anything else gives null.
func Instance(schema json.RawMessage) any {
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil
	}
	return instance(s)
}

func instance(s map[string]any) any {
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	typ, _ := s["type"].(string)
	if ts, ok := s["type"].([]any); ok && len(ts) > 0 {
		typ, _ = ts[0].(string)
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if ps, ok := props[n].(map[string]any); ok {
				out[n] = instance(ps)
			}
		}
		return out
	case "array":
		n, _ := s["minItems"].(float64)
		items, _ := s["items"].(map[string]any)
		out := []any{}
		for i := 0; i < int(n); i++ {
			out = append(out, instance(items))
		}
		return out
	case "string":
		n, _ := s["minLength"].(float64)
		return strings.Repeat("x", max(int(n), 1))
	case "integer", "number":
		n, _ := s["minimum"].(float64)
		return n
	case "boolean":
		return false
	}
	return nil
}
