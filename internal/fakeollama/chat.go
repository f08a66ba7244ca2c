package fakeollama

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/memhost/memhost/internal/fakellm"
)

// chat answers POST /api/chat as Ollama's API documentation shows: a
// stream of NDJSON objects unless "stream": false, the answer in
// message.content, format either "json" or a JSON schema, errors as
// {"error": "..."}; answers come from s.Chat.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.wait()
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	req := fakellm.Request{Path: r.URL.Path, Body: body}
	req.Model, _ = body["model"].(string)
	if b, err := json.Marshal(body["messages"]); err == nil {
		json.Unmarshal(b, &req.Messages)
	}
	if f, ok := body["format"].(map[string]any); ok {
		req.Schema, _ = json.Marshal(f)
	}
	reply := s.Chat.Next(req)
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	s.mu.Lock()
	name, m, ok := s.find(req.Model)
	s.mu.Unlock()
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	switch {
	case reply.Status >= 400:
		msg := reply.Error
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		writeJSON(w, reply.Status, map[string]string{"error": msg})
		return
	case !ok:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model \"%s\" not found, try pulling it first", req.Model)})
		return
	case m.Capabilities != nil && !slices.Contains(m.Capabilities, "completion"):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("\"%s\" does not support chat", req.Model)})
		return
	case reply.Raw != "":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(reply.Raw))
		return
	}
	reason := "stop"
	if reply.Truncated {
		reason = "length"
	}
	prompt := 0
	for _, msg := range req.Messages {
		prompt += len(strings.Fields(msg.Content))
	}
	final := map[string]any{"model": name, "created_at": time.Now().UTC().Format(time.RFC3339Nano),
		"message": map[string]any{"role": "assistant", "content": reply.Content}, "done": true, "done_reason": reason,
		"total_duration": 4883583458, "load_duration": 1334875, "prompt_eval_count": prompt, "eval_count": len(strings.Fields(reply.Content))}
	if stream, ok := body["stream"].(bool); ok && !stream {
		writeJSON(w, http.StatusOK, final)
		return
	}
	// Streaming (Ollama's default): the text in a chunk, then the final
	// object with an empty message.
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	enc.Encode(map[string]any{"model": name, "created_at": final["created_at"], "message": map[string]any{"role": "assistant", "content": reply.Content}, "done": false})
	final["message"] = map[string]any{"role": "assistant", "content": ""}
	enc.Encode(final)
}
