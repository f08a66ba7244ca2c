package memhost

// ModelsRequest asks for the models folder's list; it has no parameters.
type ModelsRequest struct{}

// RemoveModelRequest names a model to delete.
type RemoveModelRequest struct {
	Name string `json:"name"`
	// RequestID, when set, makes the write idempotent: a run with the id
	// of one that landed writes nothing and answers as it did.
	RequestID string `json:"requestId,omitempty"`
}

// RemoveModelResponse names the model deleted.
type RemoveModelResponse struct {
	Removed string `json:"removed"`
}
