package host

import "github.com/memhost/memhost/host/federated"

// Names from package federated, until its types move to the root package
// with the others.

var (
	ErrNotFederated = federated.ErrNotFederated
)
