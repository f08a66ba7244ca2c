package host

import (
	"github.com/memhost/memhost/host/generate"
	"github.com/memhost/memhost/host/semantic"
)

// The semantic tier's types, from package semantic, until they move to
// the root package with the others.
type (
	Generator           = semantic.Generator
	ConsolidateRequest  = semantic.ConsolidateRequest
	ConsolidateResponse = semantic.ConsolidateResponse
	ConsolidatedFact    = semantic.ConsolidatedFact
	SkippedBatch        = semantic.SkippedBatch
	ConsolidationRun    = semantic.ConsolidationRun
	ConsolidationStatus = semantic.ConsolidationStatus
	FactAddRequest      = semantic.FactAddRequest
	FactAddResponse     = semantic.FactAddResponse
	NearDup             = semantic.NearDup
	FactsRequest        = semantic.FactsRequest
	FactsResponse       = semantic.FactsResponse
	FactForgetRequest   = semantic.FactForgetRequest
	FactForgetResponse  = semantic.FactForgetResponse
	EntitiesRequest     = semantic.EntitiesRequest
	EntitiesResponse    = semantic.EntitiesResponse
	RelationsRequest    = semantic.RelationsRequest
	RelationsResponse   = semantic.RelationsResponse
)

var (
	// AnswerSchema: see semantic.AnswerSchema.
	AnswerSchema = semantic.AnswerSchema
)

// NearDuplicate: see semantic.NearDuplicate.
const NearDuplicate = semantic.NearDuplicate

// ErrNoGenerator: see generate.ErrNoGenerator.
var ErrNoGenerator = generate.ErrNoGenerator
