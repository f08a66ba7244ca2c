package sdk_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/memhost/memhost/sdk"
)

// TestNotReady: a not-ready error is ErrNotReady with its words, and
// StatusMessage gives its reason alone, through wrapping too.
func TestNotReady(t *testing.T) {
	err := sdk.NotReady("model %s is not pulled", "x")
	if !errors.Is(err, sdk.ErrNotReady) || err.Error() != "provider not ready: model x is not pulled" {
		t.Fatalf("NotReady = %v", err)
	}
	if m := sdk.StatusMessage(fmt.Errorf("checking: %w", err)); m != "model x is not pulled" {
		t.Errorf("StatusMessage(not ready) = %q", m)
	}
	if m := sdk.StatusMessage(errors.New("Ollama answered 500: boom")); m != "Ollama answered 500: boom" {
		t.Errorf("StatusMessage(other) = %q", m)
	}
}
