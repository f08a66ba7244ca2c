package host

import (
	"github.com/memhost/memhost/host/generate"
	"github.com/memhost/memhost/host/semantic"
)

// The semantic tier's types, from package semantic, until they move to
// the root package with the others.
type (
	Generator = semantic.Generator
)

var (
	// AnswerSchema: see semantic.AnswerSchema.
	AnswerSchema = semantic.AnswerSchema
)

// NearDuplicate: see semantic.NearDuplicate.
const NearDuplicate = semantic.NearDuplicate

// ErrNoGenerator: see generate.ErrNoGenerator.
var ErrNoGenerator = generate.ErrNoGenerator
