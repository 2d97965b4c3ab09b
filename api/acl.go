package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ACLPolicy is a named set of ACL rules in Nomad's policy language.
type ACLPolicy struct {
	Name        string
	Description string
	Rules       string
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLPolicyListStub is a policy without its rules.
type ACLPolicyListStub struct {
	Name        string
	Description string
	CreateIndex uint64
	ModifyIndex uint64
}

// ACLToken is an ACL token. SecretID is only ever filled in the answer
// to the request that created the token (bootstrap or create): the
// servers store a hash of it and cannot show it again.
type ACLToken struct {
	AccessorID string
	SecretID   string
	Name       string
	// Type is "client" (allowed what its Policies allow) or "management"
	// (allowed everything).
	Type     string
	Policies []string
	Global   bool

	CreateTime time.Time
	// ExpirationTime is when the token stops working, if it expires.
	ExpirationTime *time.Time `json:",omitempty"`
	// ExpirationTTL, on creation, makes the token expire that long after
	// it is created. It is sent as a duration string, as Nomad's client
	// does.
	ExpirationTTL time.Duration `json:",omitempty"`

	CreateIndex uint64
	ModifyIndex uint64
}

// MarshalJSON sends ExpirationTTL as a duration string ("1h0m0s").
func (t *ACLToken) MarshalJSON() ([]byte, error) {
	type plain ACLToken
	out := struct {
		*plain
		ExpirationTTL string `json:",omitempty"`
	}{plain: (*plain)(t)}
	if t.ExpirationTTL != 0 {
		out.ExpirationTTL = t.ExpirationTTL.String()
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads ExpirationTTL as a duration string or nanoseconds.
func (t *ACLToken) UnmarshalJSON(b []byte) error {
	type plain ACLToken
	aux := struct {
		*plain
		ExpirationTTL any
	}{plain: (*plain)(t)}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&aux); err != nil {
		return err
	}
	switch v := aux.ExpirationTTL.(type) {
	case string:
		if v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("ACL token ExpirationTTL %q: %w", v, err)
			}
			t.ExpirationTTL = d
		}
	case json.Number:
		// Read as written, not through a float64.
		n, err := v.Int64()
		if err != nil {
			return fmt.Errorf("ACL token ExpirationTTL %s is not a whole number of nanoseconds that fits a duration", v)
		}
		t.ExpirationTTL = time.Duration(n)
	}
	return nil
}

// ACLTokenListStub is a token in a list: no secret.
type ACLTokenListStub struct {
	AccessorID     string
	Name           string
	Type           string
	Policies       []string
	Global         bool
	CreateTime     time.Time
	ExpirationTime *time.Time `json:",omitempty"`
	CreateIndex    uint64
	ModifyIndex    uint64
}

// BootstrapRequest is the optional body of a bootstrap.
type BootstrapRequest struct {
	BootstrapSecret string
}

// ACLPolicies reaches the /v1/acl/policy endpoints.
type ACLPolicies struct {
	c *Client
}

// ACLPolicies returns a handle on the ACL policy endpoints.
func (c *Client) ACLPolicies() *ACLPolicies { return &ACLPolicies{c: c} }

// List lists the policies the token may see (all of them for a management
// token).
func (a *ACLPolicies) List(q *QueryOptions) ([]*ACLPolicyListStub, *QueryMeta, error) {
	var out []*ACLPolicyListStub
	qm, err := a.c.query("/v1/acl/policies", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Upsert creates or replaces a policy.
func (a *ACLPolicies) Upsert(policy *ACLPolicy, w *WriteOptions) (*WriteMeta, error) {
	if policy == nil || policy.Name == "" {
		return nil, errors.New("missing policy name")
	}
	return a.c.put("/v1/acl/policy/"+escape(policy.Name), policy, nil, w)
}

// Delete deletes a policy.
func (a *ACLPolicies) Delete(name string, w *WriteOptions) (*WriteMeta, error) {
	if name == "" {
		return nil, errors.New("missing policy name")
	}
	return a.c.delete("/v1/acl/policy/"+escape(name), nil, w)
}

// Info reads a policy, rules included.
func (a *ACLPolicies) Info(name string, q *QueryOptions) (*ACLPolicy, *QueryMeta, error) {
	if name == "" {
		return nil, nil, errors.New("missing policy name")
	}
	return queryOne[ACLPolicy](a.c, "/v1/acl/policy/"+escape(name), q)
}

// ACLTokens reaches the /v1/acl/token endpoints.
type ACLTokens struct {
	c *Client
}

// ACLTokens returns a handle on the ACL token endpoints.
func (c *Client) ACLTokens() *ACLTokens { return &ACLTokens{c: c} }

// Bootstrap creates the cluster's first management token, once.
func (a *ACLTokens) Bootstrap(w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	return a.BootstrapOpts("", w)
}

// BootstrapOpts is Bootstrap with a secret of the caller's choosing (a
// UUID), or a server-made one when secret is empty.
func (a *ACLTokens) BootstrapOpts(secret string, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	var in any
	if secret != "" {
		in = &BootstrapRequest{BootstrapSecret: secret}
	}
	return putOne[ACLToken](a.c, "/v1/acl/bootstrap", in, w)
}

// List lists every token, without secrets (management tokens only).
func (a *ACLTokens) List(q *QueryOptions) ([]*ACLTokenListStub, *QueryMeta, error) {
	var out []*ACLTokenListStub
	qm, err := a.c.query("/v1/acl/tokens", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Create creates a token; the answer holds its secret, the only time it
// can be read.
func (a *ACLTokens) Create(token *ACLToken, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	if token.AccessorID != "" {
		return nil, nil, errors.New("cannot specify Accessor ID")
	}
	return putOne[ACLToken](a.c, "/v1/acl/token", token, w)
}

// Update changes a token's name, type or policies; its secret and expiry
// stay.
func (a *ACLTokens) Update(token *ACLToken, w *WriteOptions) (*ACLToken, *WriteMeta, error) {
	if token.AccessorID == "" {
		return nil, nil, errors.New("missing accessor ID")
	}
	return putOne[ACLToken](a.c, "/v1/acl/token/"+escape(token.AccessorID), token, w)
}

// Delete deletes a token.
func (a *ACLTokens) Delete(accessorID string, w *WriteOptions) (*WriteMeta, error) {
	if accessorID == "" {
		return nil, errors.New("missing accessor ID")
	}
	return a.c.delete("/v1/acl/token/"+escape(accessorID), nil, w)
}

// Info reads a token by accessor ID (a management token reads any, a
// token itself).
func (a *ACLTokens) Info(accessorID string, q *QueryOptions) (*ACLToken, *QueryMeta, error) {
	if accessorID == "" {
		return nil, nil, errors.New("missing accessor ID")
	}
	return queryOne[ACLToken](a.c, "/v1/acl/token/"+escape(accessorID), q)
}

// Self reads the token the client sends.
func (a *ACLTokens) Self(q *QueryOptions) (*ACLToken, *QueryMeta, error) {
	return queryOne[ACLToken](a.c, "/v1/acl/token/self", q)
}
