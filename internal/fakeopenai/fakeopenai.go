// Package fakeopenai is an httptest server that speaks the part of the
// OpenAI REST API memhost's generator uses — GET /v1/models and POST
// /v1/chat/completions, with response_format json_schema or json_object —
// with the request, response and error shapes of OpenAI's API reference,
// which DeepSeek, vLLM, llama.cpp's server and LM Studio follow. Tests use
// it because no model can run here; answers come from a fakellm.Script.
package fakeopenai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/memhost/memhost/internal/fakellm"
)

// Server is a fake OpenAI-compatible endpoint. URL + "/v1" is its base URL.
type Server struct {
	*httptest.Server
	fakellm.Script

	mu     sync.Mutex
	key    string   // the API key it accepts; "" accepts any request
	models []string // served models
	// NoModelsRoute answers GET /v1/models with 404, as some servers do.
	noModels bool
}

// New starts a fake serving models, accepting key ("" for none).
func New(key string, models ...string) *Server {
	s := &Server{key: key, models: models}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.list)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	s.Server = httptest.NewServer(mux)
	return s
}

// Base is the base URL clients are given.
func (s *Server) Base() string { return s.URL + "/v1" }

// SetNoModelsRoute makes GET /v1/models answer 404.
func (s *Server) SetNoModelsRoute(v bool) {
	s.mu.Lock()
	s.noModels = v
	s.mu.Unlock()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, typ, code, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}})
}

// authorized checks the bearer token as OpenAI does (401 invalid_api_key).
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	key := s.key
	s.mu.Unlock()
	if key == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || got != key {
		shown := got
		if len(shown) > 8 {
			shown = shown[:3] + "*****" + shown[len(shown)-4:]
		}
		apiError(w, http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", fmt.Sprintf("Incorrect API key provided: %s.", shown))
		return false
	}
	return true
}

func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	noModels, models := s.noModels, s.models
	s.mu.Unlock()
	if noModels {
		http.NotFound(w, r)
		return
	}
	if !s.authorized(w, r) {
		return
	}
	data := []map[string]any{}
	for _, m := range models {
		data = append(data, map[string]any{"id": m, "object": "model", "created": 1700000000, "owned_by": "system"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "We could not parse the JSON body of your request.")
		return
	}
	req := fakellm.Request{Path: r.URL.Path, Body: body, Header: map[string]string{"Authorization": r.Header.Get("Authorization")}}
	req.Model, _ = body["model"].(string)
	if b, err := json.Marshal(body["messages"]); err == nil {
		json.Unmarshal(b, &req.Messages)
	}
	if rf, ok := body["response_format"].(map[string]any); ok && rf["type"] == "json_schema" {
		if js, ok := rf["json_schema"].(map[string]any); ok {
			req.Schema, _ = json.Marshal(js["schema"])
		}
	}
	reply := s.Next(req)
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	s.mu.Lock()
	served := slices.Contains(s.models, req.Model)
	s.mu.Unlock()
	switch {
	case reply.RetryAfter != "":
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	switch {
	case reply.Status >= 400:
		msg := reply.Error
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		typ := "server_error"
		if reply.Status == http.StatusTooManyRequests {
			typ = "rate_limit_exceeded"
		}
		apiError(w, reply.Status, typ, strconv.Itoa(reply.Status), msg)
		return
	case !served:
		apiError(w, http.StatusNotFound, "invalid_request_error", "model_not_found", fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.Model))
		return
	case len(req.Messages) == 0:
		apiError(w, http.StatusBadRequest, "invalid_request_error", "", "[] is too short - 'messages'")
		return
	case reply.Raw != "":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(reply.Raw))
		return
	}
	finish := "stop"
	if reply.Truncated {
		finish = "length"
	}
	prompt := 0
	for _, m := range req.Messages {
		prompt += len(strings.Fields(m.Content))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "logprobs": nil,
			"message": map[string]any{"role": "assistant", "content": reply.Content, "refusal": nil}}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": len(strings.Fields(reply.Content)), "total_tokens": prompt + len(strings.Fields(reply.Content))},
	})
}
