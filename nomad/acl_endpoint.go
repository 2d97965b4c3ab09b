package nomad

import (
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// ACL is the ACL endpoint: policies and tokens (this file), token writes
// and reads (acl_endpoint_tokens.go) and the bootstrap
// (acl_bootstrap.go), in Nomad's model.
//
// These endpoints check tokens themselves, as Nomad's do: writing and
// listing policies and tokens needs a management token; any token may
// read itself and the policies it names; everyone may read the anonymous
// policy. While ACLs are disabled they all answer ErrACLDisabled.
//
// Secrets are made on the leader, here, and never reach raft: entries
// carry the secret's hash, and the one answer that carries a secret is
// the answer to the request that created it.
type ACL struct {
	srv aclEndpointServer
}

// aclEndpointServer is what ACL uses of the server: besides the shared
// pieces, token resolution (acl.go) and the configuration its writes and
// the bootstrap reset read. (aclServer is a test helper's name.)
type aclEndpointServer interface {
	rpcForwarder
	blockingQuerier
	stateReader
	Now() time.Time
	raftApplier
	Logger() hclog.Logger
	resolveSecret(st *state.StateStore, secret string) (*structs.ACLToken, *acl.ACL, error)
	tokenBySecret(st *state.StateStore, secret string) (*structs.ACLToken, error)
	aclEnabled() bool
	aclTokenTTLBounds() (minTTL, maxTTL time.Duration)
	dataDir() string
}

func (s *Server) aclEnabled() bool { return s.config.ACLEnabled }

// aclTokenTTLBounds are the shortest and longest expiration TTL a token
// may ask for.
func (s *Server) aclTokenTTLBounds() (minTTL, maxTTL time.Duration) {
	return s.config.ACLTokenMinExpirationTTL, s.config.ACLTokenMaxExpirationTTL
}

// dataDir is where the server keeps its files ("" in memory only).
func (s *Server) dataDir() string { return s.config.DataDir }

var _ aclEndpointServer = (*Server)(nil)

// answered is how every ACL call begins: refused while ACLs are disabled,
// else sent to the leader when this server should not answer it. It
// reports whether the request is answered already; err is then the
// answer.
func (a *ACL) answered(method string, args structs.RPCInfo, reply any) (bool, error) {
	if !a.srv.aclEnabled() {
		return true, structs.ErrACLDisabled
	}
	return a.srv.forward(method, args, args, reply)
}

// managementWrite is how every ACL write of policies or tokens begins:
// answered, then a management token and a batch of 1 to
// MaxACLObjectsPerRequest objects (what names them in errors; n counts
// them) are required.
func (a *ACL) managementWrite(method string, args structs.RPCInfo, reply any, what string, n int) (bool, error) {
	if done, err := a.answered(method, args, reply); done {
		return true, err
	}
	if err := a.requireManagement(args.RequestAuthToken()); err != nil {
		return true, err
	}
	if err := checkBatch(what, n); err != nil {
		return true, err
	}
	return false, nil
}

// requireManagement resolves secret and refuses unless it is a management
// token's.
func (a *ACL) requireManagement(secret string) error {
	_, aclObj, err := a.srv.resolveSecret(a.srv.State(), secret)
	if err != nil {
		return err
	}
	if aclObj == nil || !aclObj.IsManagement() {
		return structs.ErrPermissionDenied
	}
	return nil
}

// UpsertPolicies creates or replaces policies (management only). Every
// policy is validated, its rules parsed, before anything is written, so
// one bad policy in a request writes none.
func (a *ACL) UpsertPolicies(args *structs.ACLPolicyUpsertRequest, reply *structs.GenericResponse) error {
	if done, err := a.managementWrite("ACL.UpsertPolicies", args, reply, "policy", len(args.Policies)); done {
		return err
	}
	entry := &structs.ACLPolicyUpsertRequest{Policies: make([]*structs.ACLPolicy, 0, len(args.Policies))}
	seen := map[string]bool{}
	for i, p := range args.Policies {
		if p == nil {
			return errBadRequest("policy %d is empty", i)
		}
		if err := p.Validate(); err != nil {
			return errBadRequest("policy %q: %v", p.Name, err)
		}
		if _, err := acl.Parse(p.Rules); err != nil {
			return errBadRequest("policy %q: rules: %v", p.Name, err)
		}
		if seen[p.Name] {
			return errBadRequest("policy %q is given twice in one request", p.Name)
		}
		seen[p.Name] = true
		entry.Policies = append(entry.Policies, &structs.ACLPolicy{Name: p.Name, Description: p.Description, Rules: p.Rules})
	}
	return applyIndexed(a.srv, structs.ACLPolicyUpsertRequestType, entry, &reply.Index)
}

// DeletePolicies deletes policies by name (management only). Naming a
// policy that does not exist deletes nothing and says which ones.
func (a *ACL) DeletePolicies(args *structs.ACLPolicyDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := a.managementWrite("ACL.DeletePolicies", args, reply, "policy", len(args.Names)); done {
		return err
	}
	missing, err := missingKeys(args.Names, a.srv.State().ACLPolicyByName)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return errBadRequest("ACL policy not found: %s (nothing was deleted)", strings.Join(missing, ", "))
	}
	req := &structs.ACLPolicyDeleteRequest{Names: args.Names}
	return applyIndexed(a.srv, structs.ACLPolicyDeleteRequestType, req, &reply.Index)
}

// ListPolicies lists policies: all of them for a management token, the
// ones a client token names for any other (the anonymous policy for no
// token), as Nomad does. Prefix filters by name.
func (a *ACL) ListPolicies(args *structs.ACLPolicyListRequest, reply *structs.ACLPolicyListResponse) error {
	if done, err := a.answered("ACL.ListPolicies", args, reply); done {
		return err
	}
	tok, aclObj, err := a.srv.resolveSecret(a.srv.State(), args.AuthToken)
	if err != nil {
		return err
	}
	mgmt := aclObj.IsManagement()
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		iter, err := st.ACLPoliciesByNamePrefix(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Policies = []*structs.ACLPolicyListStub{}
		for raw := iter.Next(); raw != nil; raw = iter.Next() {
			p := raw.(*structs.ACLPolicy)
			if mgmt || tok.HasPolicy(p.Name) {
				reply.Policies = append(reply.Policies, p.Stub())
			}
		}
		return maxIndex(st, state.TableACLPolicies), nil
	})
}

// GetPolicy reads one policy: a management token reads any, another token
// the policies it names, and anyone the anonymous policy. Policy is nil
// when there is no such policy (for a caller allowed to ask).
func (a *ACL) GetPolicy(args *structs.ACLPolicySpecificRequest, reply *structs.SingleACLPolicyResponse) error {
	if done, err := a.answered("ACL.GetPolicy", args, reply); done {
		return err
	}
	tok, aclObj, err := a.srv.resolveSecret(a.srv.State(), args.AuthToken)
	if err != nil {
		return err
	}
	if !aclObj.IsManagement() && args.Name != structs.AnonymousACLPolicy && !tok.HasPolicy(args.Name) {
		return structs.ErrPermissionDenied
	}
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		p, err := st.ACLPolicyByName(ws, args.Name)
		if err != nil {
			return 0, err
		}
		reply.Policy = p.Copy()
		if p != nil {
			return p.ModifyIndex, nil
		}
		return maxIndex(st, state.TableACLPolicies), nil
	})
}

// checkBatch bounds how many objects one write names.
func checkBatch(what string, n int) error {
	switch {
	case n == 0:
		return errBadRequest("at least one %s must be given", what)
	case n > structs.MaxACLObjectsPerRequest:
		return errBadRequest("%d objects given; one request may write or delete at most %d of them (ACL %s)",
			n, structs.MaxACLObjectsPerRequest, what)
	}
	return nil
}

// missingKeys returns, in order, the keys get finds nothing for (reading
// without a watch): the writes that name existing objects refuse the
// whole request when any is missing, and say which.
func missingKeys[T any](keys []string, get func(memdb.WatchSet, string) (*T, error)) ([]string, error) {
	var missing []string
	for _, k := range keys {
		obj, err := get(nil, k)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			missing = append(missing, k)
		}
	}
	return missing, nil
}
