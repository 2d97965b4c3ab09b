package structs

// ServiceRegistrationUpsertRequest is a client registering services of its
// own allocs (NodeID and SecretID say which node), and the raft entry the
// leader writes for it (without the secret).
type ServiceRegistrationUpsertRequest struct {
	Services []*ServiceRegistration
	NodeID   string
	SecretID string
	WriteRequest
}

// ServiceRegistrationDeleteRequest deletes registrations by ID. A client
// sends it for its own allocs' registrations (NodeID and SecretID set); the
// raft entry carries the IDs only.
type ServiceRegistrationDeleteRequest struct {
	IDs      []string
	NodeID   string
	SecretID string
	WriteRequest
}

// ServiceRegistrationDeleteByIDRequest is a user deleting one registration
// of a service (DELETE /v1/service/:name/:id).
type ServiceRegistrationDeleteByIDRequest struct {
	ServiceName string
	ID          string
	WriteRequest
}

// ServiceRegistrationListRequest lists the services of a namespace ("*"
// for every namespace the token may read).
type ServiceRegistrationListRequest struct {
	QueryOptions
}

// ServiceRegistrationListResponse answers ServiceRegistrationListRequest.
type ServiceRegistrationListResponse struct {
	Services []*ServiceRegistrationListStub
	QueryMeta
}

// ServiceRegistrationByNameRequest reads the registrations of one service
// in a namespace.
type ServiceRegistrationByNameRequest struct {
	ServiceName string
	QueryOptions
}

// ServiceRegistrationByNameResponse answers ServiceRegistrationByNameRequest.
type ServiceRegistrationByNameResponse struct {
	Services []*ServiceRegistration
	QueryMeta
}

// ServiceRegistrationsForAllocRequest is a client reading, for the
// templates of one of its allocs, every registration of the alloc's
// namespace (nomadService and nomadServices). NodeID and SecretID say
// which node asks; the alloc must be placed on it.
type ServiceRegistrationsForAllocRequest struct {
	AllocID  string
	NodeID   string
	SecretID string
	QueryOptions
}
