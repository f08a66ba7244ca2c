package host

import "github.com/memhost/memhost/host/federated"

// Names from package federated, until its types move to the root package
// with the others.
type (
	GitInitRequest   = federated.GitInitRequest
	GitInitResponse  = federated.GitInitResponse
	FedSyncRequest   = federated.FedSyncRequest
	FedSyncResponse  = federated.FedSyncResponse
	FederationStatus = federated.FederationStatus
	ExportRequest    = federated.ExportRequest
	ExportResponse   = federated.ExportResponse
	ImportRequest    = federated.ImportRequest
	ImportResponse   = federated.ImportResponse
)

var (
	ErrNotFederated = federated.ErrNotFederated
)
