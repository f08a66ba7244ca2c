package host

import (
	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/vault"
)

// Names from package vault, until its types move to the root package
// with the others.
type (
	RollupSummarizer = vault.RollupSummarizer
)

var (
	ErrRollupsMissing = memhost.ErrRollupsMissing
)
