package api

import "time"

// WriteRequest carries the routing fields that every write endpoint accepts
// in its JSON body. The HTTP client also sends them as query parameters and
// headers; they are in the body too because Nomad's API puts them there.
type WriteRequest struct {
	// Region is the region that should handle the write.
	Region string

	// Namespace is the namespace the write applies to.
	Namespace string

	// SecretID is the secret of the ACL token making the request.
	SecretID string
}

// QueryMeta describes the server state a read was answered from. The HTTP
// client fills it from response headers (X-Nomad-Index and friends); it is
// embedded in some response bodies only to keep Nomad's JSON shape.
type QueryMeta struct {
	// LastIndex is the raft index the answer reflects; pass it as the wait
	// index of the next blocking query.
	LastIndex uint64

	// LastContact is how long ago the answering server heard from the leader.
	LastContact time.Duration

	// KnownLeader says whether the answering server knew of a leader.
	KnownLeader bool

	// RequestTime is how long the request took, measured by the client.
	RequestTime time.Duration

	// NextToken resumes a paginated list where this page ended.
	NextToken string
}

// WriteMeta describes the result of a write.
type WriteMeta struct {
	// LastIndex is the raft index at which the write was applied.
	LastIndex uint64

	// RequestTime is how long the request took, measured by the client.
	RequestTime time.Duration
}
