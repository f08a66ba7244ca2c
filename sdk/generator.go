package sdk

import (
	"context"
	"encoding/json"
)

// Generator is a text generation provider: the second plugin kind, used for
// consolidating conversations into facts, routing memories and writing
// compaction summaries. Every method must honour ctx and be safe for
// concurrent use. Info, Status and Configure mean what they mean for an
// Embedder (Info.Dimensions and MaxInputTokens are 0 or the context size).
type Generator interface {
	Info(ctx context.Context) (Info, error)
	Status(ctx context.Context) (Status, error)
	Configure(ctx context.Context, options map[string]string) error
	// Complete answers a chat. With req.Schema set, Text must be one JSON
	// value meant to match that JSON schema; the caller still checks it.
	Complete(ctx context.Context, req CompleteRequest) (CompleteResponse, error)
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// CompleteRequest is a chat to complete.
type CompleteRequest struct {
	Messages []Message `json:"messages"`
	// Schema, when set, is a JSON schema the answer must follow: the
	// provider asks its model for JSON (Ollama's format, OpenAI's
	// response_format).
	Schema      json.RawMessage `json:"schema,omitempty"`
	MaxTokens   int             `json:"maxTokens,omitempty"`   // 0: the provider's default
	Temperature float64         `json:"temperature,omitempty"` // 0: deterministic where the model allows
}

// CompleteResponse is the model's answer.
type CompleteResponse struct {
	Text         string `json:"text"`
	Model        string `json:"model"`
	InputTokens  int    `json:"inputTokens,omitempty"`
	OutputTokens int    `json:"outputTokens,omitempty"`
}
