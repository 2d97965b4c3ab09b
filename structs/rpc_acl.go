package structs

// ACLPolicyUpsertRequest is ACL.UpsertPolicies, and the raft entry that
// stores the policies: create or replace each by name.
type ACLPolicyUpsertRequest struct {
	Policies []*ACLPolicy
	WriteRequest
}

// ACLPolicyDeleteRequest is ACL.DeletePolicies and its raft entry.
type ACLPolicyDeleteRequest struct {
	Names []string
	WriteRequest
}

// ACLPolicyListRequest is ACL.ListPolicies; Prefix filters by name.
type ACLPolicyListRequest struct {
	QueryOptions
}

// ACLPolicyListResponse lists policies without their rules.
type ACLPolicyListResponse struct {
	Policies []*ACLPolicyListStub
	QueryMeta
}

// ACLPolicySpecificRequest is ACL.GetPolicy.
type ACLPolicySpecificRequest struct {
	Name string
	QueryOptions
}

// SingleACLPolicyResponse answers ACL.GetPolicy; Policy is nil when there
// is no such policy.
type SingleACLPolicyResponse struct {
	Policy *ACLPolicy
	QueryMeta
}

// ACLTokenBootstrapRequest is ACL.Bootstrap. BootstrapSecret, if set,
// becomes the bootstrap token's secret (it must be a UUID), as Nomad's
// BootstrapSecret does, so provisioning tools can know it in advance.
type ACLTokenBootstrapRequest struct {
	BootstrapSecret string
	WriteRequest
}

// ACLTokenBootstrapApplyRequest is the raft entry of a bootstrap: the
// management token (its secret hashed, never in clear) and, when the
// operator reset the bootstrap, the reset index the leader checked. The
// FSM refuses it if the cluster was bootstrapped at any other index.
type ACLTokenBootstrapApplyRequest struct {
	Token      *ACLToken
	ResetIndex uint64
}

// ACLTokenUpsertRequest is ACL.UpsertTokens: tokens without an AccessorID
// are created, the others updated. As a raft entry it carries the tokens
// as the leader completed them, secrets hashed.
type ACLTokenUpsertRequest struct {
	Tokens []*ACLToken
	WriteRequest
}

// ACLTokenUpsertResponse answers ACL.UpsertTokens and ACL.Bootstrap with
// the tokens as stored; a token created by the request carries its
// SecretID, this once.
type ACLTokenUpsertResponse struct {
	Tokens []*ACLToken
	WriteMeta
}

// ACLTokenDeleteRequest is ACL.DeleteTokens and its raft entry.
type ACLTokenDeleteRequest struct {
	AccessorIDs []string
	WriteRequest
}

// ACLTokenListRequest is ACL.ListTokens; Prefix filters by accessor ID.
type ACLTokenListRequest struct {
	QueryOptions
}

// ACLTokenListResponse lists tokens without secrets.
type ACLTokenListResponse struct {
	Tokens []*ACLTokenListStub
	QueryMeta
}

// ACLTokenSpecificRequest is ACL.GetToken.
type ACLTokenSpecificRequest struct {
	AccessorID string
	QueryOptions
}

// SingleACLTokenResponse answers ACL.GetToken and ACL.GetTokenSelf. The
// token's SecretID is always empty: the servers do not have it.
type SingleACLTokenResponse struct {
	Token *ACLToken
	QueryMeta
}

// ResolveACLTokenRequest is ACL.ResolveToken: a client agent asking what
// the token with this secret may do ("" is the anonymous token).
type ResolveACLTokenRequest struct {
	SecretID string
	QueryOptions
}

// ResolveACLTokenResponse is the resolved token (without its secret) and
// the policies it names that exist, so the caller can compile them with
// acl.Compile. A management token has no policies.
type ResolveACLTokenResponse struct {
	Token    *ACLToken
	Policies []*ACLPolicy
	QueryMeta
}
