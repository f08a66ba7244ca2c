package host

import "github.com/memhost/memhost/host/vault"

// Names from package vault, until its types move to the root package
// with the others.
type (
	LinksRequest        = vault.LinksRequest
	LinksResponse       = vault.LinksResponse
	LinkInfo            = vault.LinkInfo
	MoveRequest         = vault.MoveRequest
	MoveResponse        = vault.MoveResponse
	LinkUpdate          = vault.LinkUpdate
	RollupSummarizer    = vault.RollupSummarizer
	RollupRequest       = vault.RollupRequest
	RollupResponse      = vault.RollupResponse
	PruneRequest        = vault.PruneRequest
	PruneResponse       = vault.PruneResponse
	PrunedLog           = vault.PrunedLog
	MissingLog          = vault.MissingLog
	RollupsMissingError = vault.RollupsMissingError
)

var (
	ErrRollupsMissing = vault.ErrRollupsMissing
)
