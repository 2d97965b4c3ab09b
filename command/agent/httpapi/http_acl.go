package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/drover-sched/drover/structs"
)

// routeACL registers Nomad's ACL endpoints. Each is one call to the ACL
// RPC endpoint, which checks the request's token itself.
func (s *httpAPI) routeACL(mux *http.ServeMux) {
	s.handle(mux, "/v1/acl/bootstrap", s.aclBootstrap, write...)
	s.handle(mux, "/v1/acl/policies", s.aclPolicyList, read...)
	s.handle(mux, "/v1/acl/policy/{name}", s.aclPolicyGet, read...)
	s.handle(mux, "/v1/acl/policy/{name}", s.aclPolicyPut, write...)
	s.handle(mux, "/v1/acl/policy/{name}", s.aclPolicyDelete, http.MethodDelete)
	s.handle(mux, "/v1/acl/tokens", s.aclTokenList, read...)
	s.handle(mux, "/v1/acl/token", s.aclTokenCreate, write...)
	s.handle(mux, "/v1/acl/token/self", s.aclTokenSelf, read...)
	s.handle(mux, "/v1/acl/token/{id}", s.aclTokenGet, read...)
	s.handle(mux, "/v1/acl/token/{id}", s.aclTokenUpdate, write...)
	s.handle(mux, "/v1/acl/token/{id}", s.aclTokenDelete, http.MethodDelete)
}

// aclBootstrap answers PUT or POST /v1/acl/bootstrap with the bootstrap
// token, secret included. The optional body is Nomad's
// {"BootstrapSecret": "<uuid>"}.
func (s *httpAPI) aclBootstrap(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.ACLTokenBootstrapRequest
	s.parseWrite(r, &args.WriteRequest)
	var body struct{ BootstrapSecret string }
	if err := optionalBody(r, &body); err != nil {
		return nil, err
	}
	args.BootstrapSecret = body.BootstrapSecret
	var out structs.ACLTokenUpsertResponse
	if err := s.call(r, "ACL.Bootstrap", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.Tokens) != 1 {
		return nil, fmt.Errorf("the bootstrap answered %d tokens, want 1", len(out.Tokens))
	}
	return out.Tokens[0], nil
}

// aclPolicyList answers GET /v1/acl/policies: the policies the token may
// see, without their rules.
func (s *httpAPI) aclPolicyList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.ACLPolicyListRequest
	return serveList(s, w, r, &args.QueryOptions, func() ([]*structs.ACLPolicyListStub, structs.QueryMeta, error) {
		var out structs.ACLPolicyListResponse
		err := s.call(r, "ACL.ListPolicies", &args, &out)
		return out.Policies, out.QueryMeta, err
	}, func(p *structs.ACLPolicyListStub) string { return p.Name })
}

func (s *httpAPI) aclPolicyGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLPolicySpecificRequest{Name: r.PathValue("name")}
	var out structs.SingleACLPolicyResponse
	if err := s.read(w, r, &args.QueryOptions, "ACL.GetPolicy", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	if out.Policy == nil {
		return nil, notFound("ACL policy not found")
	}
	return out.Policy, nil
}

// aclPolicyPut answers PUT or POST /v1/acl/policy/:name: create or
// replace the policy. The body's Name, when given, must be the path's.
func (s *httpAPI) aclPolicyPut(w http.ResponseWriter, r *http.Request) (any, error) {
	name := r.PathValue("name")
	var body struct{ Name, Description, Rules string }
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.Name != "" && body.Name != name {
		return nil, badRequest("Policy name does not match request path (body %q, path %q)", body.Name, name)
	}
	args := structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: name, Description: body.Description, Rules: body.Rules}}}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.GenericResponse
	if err := s.call(r, "ACL.UpsertPolicies", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

func (s *httpAPI) aclPolicyDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLPolicyDeleteRequest{Names: []string{r.PathValue("name")}}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.GenericResponse
	if err := s.call(r, "ACL.DeletePolicies", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

// aclTokenList answers GET /v1/acl/tokens (management tokens only):
// tokens without secrets.
func (s *httpAPI) aclTokenList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.ACLTokenListRequest
	return serveList(s, w, r, &args.QueryOptions, func() ([]*structs.ACLTokenListStub, structs.QueryMeta, error) {
		var out structs.ACLTokenListResponse
		err := s.call(r, "ACL.ListTokens", &args, &out)
		return out.Tokens, out.QueryMeta, err
	}, func(t *structs.ACLTokenListStub) string { return t.AccessorID })
}

// aclTokenBody is a token as Nomad's clients send it. ExpirationTTL comes
// as a duration string ("1h") from Nomad's Go client and may come as
// nanoseconds from others.
type aclTokenBody struct {
	AccessorID     string
	SecretID       string
	Name           string
	Type           string
	Policies       []string
	Roles          []json.RawMessage
	Global         bool
	ExpirationTime *time.Time
	ExpirationTTL  flexDuration
}

// flexDuration decodes a duration string or a number of nanoseconds.
type flexDuration time.Duration

func (d *flexDuration) UnmarshalJSON(b []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		*d = 0
	case json.Number:
		// Read as written: through a float64, a number past an int64
		// (or with a fraction) would become some other duration.
		n, err := x.Int64()
		if err != nil {
			return fmt.Errorf("ExpirationTTL %s is not a whole number of nanoseconds that fits a duration (at most %d, about 292 years); send a duration string such as \"1h\"", x, int64(math.MaxInt64))
		}
		*d = flexDuration(n)
	case string:
		if x == "" {
			*d = 0
			return nil
		}
		dur, err := time.ParseDuration(x)
		if err != nil {
			return fmt.Errorf("ExpirationTTL %q is not a duration such as \"1h\"", x)
		}
		*d = flexDuration(dur)
	default:
		return fmt.Errorf("ExpirationTTL must be a duration string or nanoseconds")
	}
	return nil
}

// token turns the body into a token, refusing what Drover does not do.
func (b *aclTokenBody) token() (*structs.ACLToken, error) {
	if len(b.Roles) > 0 {
		return nil, badRequest("Drover has no ACL roles: give the token its policies instead of Roles")
	}
	return &structs.ACLToken{
		AccessorID: b.AccessorID, SecretID: b.SecretID, Name: b.Name, Type: b.Type, Policies: b.Policies,
		Global: b.Global, ExpirationTime: b.ExpirationTime, ExpirationTTL: time.Duration(b.ExpirationTTL),
	}, nil
}

// aclTokenCreate answers PUT or POST /v1/acl/token: a new token, with its
// secret this once.
func (s *httpAPI) aclTokenCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	var body aclTokenBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	switch {
	case body.AccessorID != "":
		return nil, badRequest("a new token cannot name its AccessorID; to update token %s, PUT /v1/acl/token/%s", body.AccessorID, body.AccessorID)
	case body.SecretID != "":
		return nil, badRequest("Drover makes a new token's SecretID itself; leave SecretID empty")
	}
	return s.aclTokenUpsert(w, r, &body)
}

// aclTokenUpdate answers PUT or POST /v1/acl/token/:accessor_id. The
// secret, creation time and expiry of a token never change.
func (s *httpAPI) aclTokenUpdate(w http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	var body aclTokenBody
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	if body.AccessorID != "" && body.AccessorID != id {
		return nil, badRequest("Token Accessor ID does not match path (body %q, path %q)", body.AccessorID, id)
	}
	body.AccessorID = id
	return s.aclTokenUpsert(w, r, &body)
}

func (s *httpAPI) aclTokenUpsert(w http.ResponseWriter, r *http.Request, body *aclTokenBody) (any, error) {
	tok, err := body.token()
	if err != nil {
		return nil, err
	}
	args := structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{tok}}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.ACLTokenUpsertResponse
	if err := s.call(r, "ACL.UpsertTokens", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.Tokens) != 1 {
		return nil, fmt.Errorf("the token write answered %d tokens, want 1", len(out.Tokens))
	}
	return out.Tokens[0], nil
}

func (s *httpAPI) aclTokenGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLTokenSpecificRequest{AccessorID: r.PathValue("id")}
	var out structs.SingleACLTokenResponse
	if err := s.read(w, r, &args.QueryOptions, "ACL.GetToken", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	if out.Token == nil {
		return nil, notFound("ACL token not found")
	}
	return out.Token, nil
}

// aclTokenSelf answers GET /v1/acl/token/self: the token the request
// carries (the anonymous token when it carries none).
func (s *httpAPI) aclTokenSelf(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.GenericRequest
	var out structs.SingleACLTokenResponse
	if err := s.read(w, r, &args.QueryOptions, "ACL.GetTokenSelf", &args, &out, &out.QueryMeta); err != nil {
		return nil, err
	}
	if out.Token == nil {
		return nil, notFound("ACL token not found")
	}
	return out.Token, nil
}

func (s *httpAPI) aclTokenDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.ACLTokenDeleteRequest{AccessorIDs: []string{r.PathValue("id")}}
	s.parseWrite(r, &args.WriteRequest)
	var out structs.GenericResponse
	if err := s.call(r, "ACL.DeleteTokens", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
