// Package fakeollama is an httptest server that speaks the part of Ollama's
// REST API memhost uses — GET /api/tags, POST /api/show, POST /api/embed,
// POST /api/chat —
// with the request and response shapes of Ollama's API documentation
// (docs/api.md). Tests use it because no Ollama server can run here.
//
// Embeddings are deterministic (feature hashing of words), so a text always
// gets the same vector, alone or in a batch.
package fakeollama

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/memhost/memhost/internal/fakellm"
)

// Model is a model the fake server has "pulled".
type Model struct {
	Dimensions   int
	Capabilities []string // e.g. {"embedding"} or {"completion"}; nil omits the field, as older servers do
	Digest       string
}

// Server is a fake Ollama. Its fields may be changed between requests
// (under Lock) to inject faults.
type Server struct {
	*httptest.Server
	handler http.Handler
	// Chat scripts /api/chat's answers (chat.go).
	Chat fakellm.Script

	mu     sync.Mutex
	Models map[string]Model // by full name, e.g. "embeddinggemma:latest"
	// Fault injection.
	Delay          time.Duration // before every answer
	FailNext       int           // answer the next N /api/embed calls with 503
	Malformed      bool          // /api/embed answers broken JSON
	WrongLength    bool          // /api/embed returns vectors one too short
	EmbedNotFound  bool          // /api/embed answers 404 as for a model that is not pulled
	embedCalls     int
	embedBatchSize []int
	lastRequest    map[string]any
}

// New starts a fake Ollama with the given models.
func New(models map[string]Model) *Server {
	s := &Server{Models: models}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tags", s.tags)
	mux.HandleFunc("POST /api/show", s.show)
	mux.HandleFunc("POST /api/embed", s.embed)
	mux.HandleFunc("POST /api/chat", s.chat) // chat.go
	s.handler = mux
	s.Server = httptest.NewServer(mux)
	return s
}

// Restart serves again on the address of a closed server, as an Ollama
// that was stopped and started again.
func (s *Server) Restart() error {
	addr := s.Listener.Addr().String()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := httptest.NewUnstartedServer(s.handler)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	s.Server = srv
	return nil
}

// Lock and Unlock guard the fault-injection fields.
func (s *Server) Lock()   { s.mu.Lock() }
func (s *Server) Unlock() { s.mu.Unlock() }

// EmbedCalls returns the number of /api/embed requests and their input
// sizes.
func (s *Server) EmbedCalls() (int, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.embedCalls, append([]int(nil), s.embedBatchSize...)
}

// LastEmbedRequest is the body of the last /api/embed request.
func (s *Server) LastEmbedRequest() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastRequest
}

func (s *Server) wait() {
	s.mu.Lock()
	d := s.Delay
	s.mu.Unlock()
	time.Sleep(d)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// find resolves a name as Ollama does: a missing tag means "latest".
func (s *Server) find(name string) (string, Model, bool) {
	if !strings.Contains(name, ":") {
		name += ":latest"
	}
	m, ok := s.Models[name]
	return name, m, ok
}

func (s *Server) tags(w http.ResponseWriter, r *http.Request) {
	s.wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	type details struct {
		Format            string   `json:"format"`
		Family            string   `json:"family"`
		Families          []string `json:"families"`
		ParameterSize     string   `json:"parameter_size"`
		QuantizationLevel string   `json:"quantization_level"`
	}
	type model struct {
		Name       string  `json:"name"`
		Model      string  `json:"model"`
		ModifiedAt string  `json:"modified_at"`
		Size       int64   `json:"size"`
		Digest     string  `json:"digest"`
		Details    details `json:"details"`
	}
	out := struct {
		Models []model `json:"models"`
	}{Models: []model{}}
	for name, m := range s.Models {
		out.Models = append(out.Models, model{Name: name, Model: name, ModifiedAt: "2026-11-01T10:00:00Z", Size: 621875200,
			Digest: m.Digest, Details: details{Format: "gguf", Family: "gemma3", ParameterSize: "307.58M", QuantizationLevel: "BF16"}})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	s.wait()
	var req struct {
		Model string `json:"model"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	s.mu.Lock()
	name, m, ok := s.find(req.Model)
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model '%s' not found", req.Model)})
		return
	}
	resp := map[string]any{
		"modelfile":  "# Modelfile generated by \"ollama show\"\nFROM " + name,
		"parameters": "",
		"template":   "{{ .Prompt }}",
		"details":    map[string]any{"format": "gguf", "family": "gemma3", "families": []string{"gemma3"}},
		"model_info": map[string]any{"general.architecture": "gemma3", "gemma3.embedding_length": m.Dimensions, "gemma3.context_length": 2048},
	}
	if m.Capabilities != nil {
		resp["capabilities"] = m.Capabilities
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	s.wait()
	var req struct {
		Model     string          `json:"model"`
		Input     json.RawMessage `json:"input"`
		Truncate  *bool           `json:"truncate"`
		KeepAlive any             `json:"keep_alive"`
	}
	var raw map[string]any
	body := json.NewDecoder(r.Body)
	if err := body.Decode(&raw); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid request body"})
		return
	}
	b, _ := json.Marshal(raw)
	json.Unmarshal(b, &req)
	var inputs []string
	if err := json.Unmarshal(req.Input, &inputs); err != nil {
		var one string
		if err := json.Unmarshal(req.Input, &one); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid input type"})
			return
		}
		inputs = []string{one}
	}
	s.mu.Lock()
	s.embedCalls++
	s.embedBatchSize = append(s.embedBatchSize, len(inputs))
	s.lastRequest = raw
	fail, malformed, short, notFound := s.FailNext > 0, s.Malformed, s.WrongLength, s.EmbedNotFound
	if fail {
		s.FailNext--
	}
	name, m, ok := s.find(req.Model)
	s.mu.Unlock()
	switch {
	case fail:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "server busy, please try again"})
		return
	case !ok || notFound:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": fmt.Sprintf("model \"%s\" not found, try pulling it first", req.Model)})
		return
	case m.Capabilities != nil && !slices.Contains(m.Capabilities, "embedding"):
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("\"%s\" does not support embeddings", req.Model)})
		return
	case malformed:
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"model": "` + name + `", "embeddings": [[0.1, 0.2,`))
		return
	}
	vecs := make([][]float64, len(inputs))
	for i, t := range inputs {
		vecs[i] = Vector(t, m.Dimensions)
		if short {
			vecs[i] = vecs[i][:len(vecs[i])-1]
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"model": name, "embeddings": vecs, "total_duration": 14143917, "load_duration": 1019500, "prompt_eval_count": 8})
}

// Vector is the fake model's embedding of text: words hashed into dims
// buckets, unit length.
func Vector(text string, dims int) []float64 {
	v := make([]float64, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(dims)] += 1
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		v[0] = 1
		return v
	}
	for i := range v {
		v[i] /= math.Sqrt(n)
	}
	return v
}
