// Package sdk is the public contract between memhost and its provider
// plugins: embeddings providers (Embedder) and text generators
// (Generator).
//
// A provider implements Embedder or Generator and calls Serve from its
// main function:
//
//	func main() { sdk.Serve(&myEmbedder{}) }
//
// and its binary, named memhost-embeddings-<name> (an Embedder) or
// memhost-generator-<name> (a Generator), goes in $MEMHOST_HOME/plugins/. memhost starts it as a subprocess through
// HashiCorp go-plugin and talks to it over gRPC; see examples/embeddings-hello
// for a complete provider, and package sdktest for the conformance suite
// every provider should pass in its own tests.
//
// This package imports only go-plugin, gRPC, protobuf and hclog: no cgo.
package sdk

import (
	"context"
	"errors"
	"fmt"
)

// Provider is what every plugin implements, whatever its kind: Embedder
// and Generator both extend it. Serve takes one.
type Provider interface {
	Info(ctx context.Context) (Info, error)
	Status(ctx context.Context) (Status, error)
	Configure(ctx context.Context, options map[string]string) error
}

// Embedder is an embeddings provider. Every method must honour ctx and be
// safe for concurrent use.
type Embedder interface {
	// Info describes the provider and its model. Dimensions may be 0 until
	// the model is known (e.g. still downloading).
	Info(ctx context.Context) (Info, error)
	// Status says whether Embed can be called now.
	Status(ctx context.Context) (Status, error)
	// Configure passes the plugin's options from config.yaml (the keys
	// under memory.embedding.options). It is called before any Embed and
	// again, with the same options, after the plugin is restarted.
	// Unknown options should be rejected with an error naming them.
	Configure(ctx context.Context, options map[string]string) error
	// Embed returns one vector of Info().Dimensions per text, in order.
	// Empty texts must not fail; texts longer than the model takes are
	// truncated, not refused.
	Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error)
}

// Info describes a provider.
type Info struct {
	Name           string `json:"name"`    // e.g. "local", "ollama", "hello"
	Version        string `json:"version"` // the plugin's own version
	ModelID        string `json:"modelId"` // identifies the vectors: two providers with one ModelID must give the same vectors
	Dimensions     int    `json:"dimensions"`
	MaxInputTokens int    `json:"maxInputTokens"`
}

// State is a provider's readiness.
type State string

// States.
const (
	StateReady       State = "ready"
	StateDownloading State = "downloading"
	StateLoading     State = "loading"
	StateError       State = "error"
)

// Status is a provider's readiness, with progress (0..1) while downloading
// or loading and a message for people.
type Status struct {
	State    State   `json:"state"`
	Progress float64 `json:"progress"`
	Message  string  `json:"message,omitempty"`
}

// Kind says what texts are embedded for: some models embed queries and
// documents differently (e.g. nomic-embed's "search_query: " prefix).
type Kind int

// Kinds.
const (
	KindDocument Kind = iota
	KindQuery
)

func (k Kind) String() string {
	if k == KindQuery {
		return "query"
	}
	return "document"
}

// Errors a provider returns, or that the client turns gRPC codes into.
var (
	// ErrNotReady: the provider cannot embed yet (downloading, loading,
	// or in error); Status says why.
	ErrNotReady = errors.New("provider not ready")
	// ErrBadRequest: the request or the options are invalid.
	ErrBadRequest = errors.New("invalid request")
	// ErrUnavailable: the plugin process did not respond.
	ErrUnavailable = errors.New("plugin did not respond")
)

// NotReadyError is a provider not ready, and why: "provider not ready:
// model x is not pulled". It is ErrNotReady to errors.Is.
type NotReadyError struct {
	Reason string
}

func (e *NotReadyError) Error() string        { return ErrNotReady.Error() + ": " + e.Reason }
func (e *NotReadyError) Is(target error) bool { return target == ErrNotReady }

// NotReady returns a *NotReadyError with a formatted reason.
func NotReady(format string, args ...any) error {
	return &NotReadyError{Reason: fmt.Sprintf(format, args...)}
}

// StatusMessage words err for Status.Message: the reason of a
// *NotReadyError in its chain, the whole text of any other error.
func StatusMessage(err error) string {
	var nr *NotReadyError
	if errors.As(err, &nr) {
		return nr.Reason
	}
	return err.Error()
}

// BadRequest wraps ErrBadRequest with a reason.
func BadRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}
