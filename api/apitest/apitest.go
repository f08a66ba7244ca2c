// Package apitest is a fake of the API for the tests of its callers (the
// CLI, MCP, the dashboard): a Fake's operations are its function fields,
// generated from the operation table (fake_gen.go).
package apitest

import (
	"errors"
	"fmt"

	"github.com/memhost/memhost/api"
)

// ErrNotSet is the error of a Fake's operation whose function is nil.
var ErrNotSet = errors.New("apitest: the fake's function for this operation is not set")

func notSet(op api.Operation) error {
	return fmt.Errorf("%s: %w", op.Info().Name, ErrNotSet)
}
