package nomad

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// UpsertTokens creates tokens (no AccessorID) or updates them (management
// only). For a new token the leader makes the accessor and the secret,
// sets CreateTime and, from ExpirationTTL, ExpirationTime; the raft entry
// carries only the secret's hash, and the answer carries the secret this
// once. An update keeps the token's secret, creation time and expiry:
// those cannot change. Every token is checked before anything is written.
func (a *ACL) UpsertTokens(args *structs.ACLTokenUpsertRequest, reply *structs.ACLTokenUpsertResponse) error {
	if done, err := a.managementWrite("ACL.UpsertTokens", args, reply, "token", len(args.Tokens)); done {
		return err
	}
	st := a.srv.State()
	now := a.srv.Now().UTC()
	entry := &structs.ACLTokenUpsertRequest{Tokens: make([]*structs.ACLToken, 0, len(args.Tokens))}
	secrets := map[string]string{} // accessor -> secret, for new tokens only
	seen := map[string]bool{}
	for i, in := range args.Tokens {
		if in == nil {
			return errBadRequest("token %d is empty", i)
		}
		tok := in.Copy()
		where := fmt.Sprintf("token %d", i)
		if tok.AccessorID != "" {
			where = "token " + tok.AccessorID
		}
		if err := tok.Validate(); err != nil {
			return errBadRequest("%s: %v", where, err)
		}
		if err := a.checkPoliciesExist(st, tok.Policies); err != nil {
			return errBadRequest("%s: %v", where, err)
		}
		if tok.AccessorID == "" {
			secret := structs.GenerateUUID()
			tok.AccessorID = structs.GenerateUUID()
			tok.CreateTime = now
			if err := a.setExpiry(tok, now); err != nil {
				return errBadRequest("%s: %v", where, err)
			}
			tok.SecretHash = structs.HashACLSecret(secret)
			secrets[tok.AccessorID] = secret
		} else if err := a.keepImmutable(st, tok); err != nil {
			return err
		}
		if seen[tok.AccessorID] {
			return errBadRequest("token %s is given twice in one request", tok.AccessorID)
		}
		seen[tok.AccessorID] = true
		tok.SecretID = ""
		tok.ExpirationTTL = 0
		tok.CreateIndex, tok.ModifyIndex = 0, 0
		entry.Tokens = append(entry.Tokens, tok)
	}
	idx, _, err := a.srv.raftApply(structs.ACLTokenUpsertRequestType, entry)
	if err != nil {
		return err
	}
	st = a.srv.State()
	for _, t := range entry.Tokens {
		stored, err := st.ACLTokenByAccessorID(nil, t.AccessorID)
		if err != nil {
			return err
		}
		if stored == nil {
			return fmt.Errorf("ACL token %s was written at index %d but cannot be read back", t.AccessorID, idx)
		}
		out := stored.Copy()
		out.SecretID = secrets[t.AccessorID]
		reply.Tokens = append(reply.Tokens, out)
	}
	reply.Index = idx
	return nil
}

// checkPoliciesExist refuses a token naming a policy that does not exist:
// it would silently grant less than the operator meant.
func (a *ACL) checkPoliciesExist(st *state.StateStore, names []string) error {
	missing, err := missingKeys(names, st.ACLPolicyByName)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("no ACL policy named %s exists; create it first (drover acl policy apply)", strings.Join(missing, ", "))
	}
	return nil
}

// setExpiry turns a new token's ExpirationTTL (or ExpirationTime) into an
// ExpirationTime, within the server's bounds.
func (a *ACL) setExpiry(tok *structs.ACLToken, now time.Time) error {
	ttl := tok.ExpirationTTL
	if tok.ExpirationTime != nil {
		ttl = tok.ExpirationTime.Sub(now)
	}
	if ttl == 0 && tok.ExpirationTime == nil {
		return nil
	}
	minTTL, maxTTL := a.srv.aclTokenTTLBounds()
	switch {
	case ttl < minTTL:
		return fmt.Errorf("expires in %s, sooner than the minimum %s (server acl.token_min_expiration_ttl)", ttl.Round(time.Second), minTTL)
	case ttl > maxTTL:
		return fmt.Errorf("expires in %s, later than the maximum %s (server acl.token_max_expiration_ttl)", ttl.Round(time.Second), maxTTL)
	}
	exp := now.Add(ttl)
	tok.ExpirationTime = &exp
	return nil
}

// keepImmutable completes an update from the stored token: the secret,
// creation time and expiry never change, nor does Global.
func (a *ACL) keepImmutable(st *state.StateStore, tok *structs.ACLToken) error {
	existing, err := st.ACLTokenByAccessorID(nil, tok.AccessorID)
	if err != nil {
		return err
	}
	if existing == nil {
		return fmt.Errorf("ACL token %s not found: create a token without an accessor ID", tok.AccessorID)
	}
	if tok.Global != existing.Global {
		return errBadRequest("token %s: cannot toggle global mode (it is %t)", tok.AccessorID, existing.Global)
	}
	if tok.ExpirationTTL != 0 || (tok.ExpirationTime != nil &&
		(existing.ExpirationTime == nil || !tok.ExpirationTime.Equal(*existing.ExpirationTime))) {
		return errBadRequest("token %s: its expiration is fixed when it is created and cannot be changed", tok.AccessorID)
	}
	if tok.SecretID != "" && structs.HashACLSecret(tok.SecretID) != existing.SecretHash {
		return errBadRequest("token %s: its secret ID cannot be changed", tok.AccessorID)
	}
	tok.SecretHash = existing.SecretHash
	tok.CreateTime = existing.CreateTime
	tok.ExpirationTime = existing.ExpirationTime
	return nil
}

// DeleteTokens deletes tokens by accessor ID (management only). If any is
// unknown, nothing is deleted and the answer names them, in Nomad's words.
func (a *ACL) DeleteTokens(args *structs.ACLTokenDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := a.managementWrite("ACL.DeleteTokens", args, reply, "token", len(args.AccessorIDs)); done {
		return err
	}
	missing, err := missingKeys(args.AccessorIDs, a.srv.State().ACLTokenByAccessorID)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return errBadRequest("Cannot delete nonexistent tokens: %s", strings.Join(missing, ", "))
	}
	req := &structs.ACLTokenDeleteRequest{AccessorIDs: args.AccessorIDs}
	return applyIndexed(a.srv, structs.ACLTokenDeleteRequestType, req, &reply.Index)
}

// ListTokens lists tokens without secrets (management only). Prefix
// filters by accessor ID.
func (a *ACL) ListTokens(args *structs.ACLTokenListRequest, reply *structs.ACLTokenListResponse) error {
	if done, err := a.answered("ACL.ListTokens", args, reply); done {
		return err
	}
	if err := a.requireManagement(args.AuthToken); err != nil {
		return err
	}
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		iter, err := st.ACLTokensByAccessorPrefix(ws, args.Prefix)
		if err != nil {
			return 0, err
		}
		reply.Tokens = []*structs.ACLTokenListStub{}
		for raw := iter.Next(); raw != nil; raw = iter.Next() {
			reply.Tokens = append(reply.Tokens, raw.(*structs.ACLToken).Stub())
		}
		return maxIndex(st, state.TableACLTokens), nil
	})
}

// GetToken reads a token by accessor ID: a management token reads any, a
// token reads itself. The answer never holds the secret. Token is nil
// when a management token asks for one that does not exist.
func (a *ACL) GetToken(args *structs.ACLTokenSpecificRequest, reply *structs.SingleACLTokenResponse) error {
	if done, err := a.answered("ACL.GetToken", args, reply); done {
		return err
	}
	_, aclObj, err := a.srv.resolveSecret(a.srv.State(), args.AuthToken)
	if err != nil {
		return err
	}
	mgmt := aclObj.IsManagement()
	hash := structs.HashACLSecret(args.AuthToken)
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		tok, err := st.ACLTokenByAccessorID(ws, args.AccessorID)
		if err != nil {
			return 0, err
		}
		if !mgmt && (tok == nil || args.AuthToken == "" || tok.SecretHash != hash) {
			return 0, structs.ErrPermissionDenied
		}
		reply.Token = tok.Copy()
		if tok != nil {
			return tok.ModifyIndex, nil
		}
		return maxIndex(st, state.TableACLTokens), nil
	})
}

// GetTokenSelf answers the token the request's own secret names (Nomad's
// /v1/acl/token/self): the anonymous token without a secret, and
// ErrTokenNotFound for an unknown or expired one.
func (a *ACL) GetTokenSelf(args *structs.GenericRequest, reply *structs.SingleACLTokenResponse) error {
	if done, err := a.answered("ACL.GetTokenSelf", args, reply); done {
		return err
	}
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		if args.AuthToken == "" {
			reply.Token = structs.AnonymousACLToken()
			return maxIndex(st, state.TableACLTokens), nil
		}
		tok, err := st.ACLTokenBySecretHash(ws, structs.HashACLSecret(args.AuthToken))
		if err != nil {
			return 0, err
		}
		if tok == nil || tok.IsExpired(a.srv.Now()) {
			return 0, structs.ErrTokenNotFound
		}
		reply.Token = tok.Copy()
		return tok.ModifyIndex, nil
	})
}

// ResolveToken answers the token a secret names and the policies it names
// that exist, for a client agent that must decide on a request itself
// (logs, file system): it compiles them with acl.Compile. The secret is
// the credential, so no other token is needed. An empty secret is the
// anonymous token; an unknown or expired one is ErrTokenNotFound.
func (a *ACL) ResolveToken(args *structs.ResolveACLTokenRequest, reply *structs.ResolveACLTokenResponse) error {
	if done, err := a.answered("ACL.ResolveToken", args, reply); done {
		return err
	}
	return a.srv.blockingQuery(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		tok := structs.AnonymousACLToken()
		if args.SecretID != "" {
			var err error
			if tok, err = a.srv.tokenBySecret(st, args.SecretID); err != nil {
				return 0, err
			}
			tok = tok.Copy()
		}
		reply.Token, reply.Policies = tok, nil
		if !tok.IsManagement() {
			policies, err := st.ACLPoliciesByNames(ws, tok.Policies)
			if err != nil {
				return 0, err
			}
			for _, p := range policies {
				reply.Policies = append(reply.Policies, p.Copy())
			}
		}
		return maxIndex(st, state.TableACLTokens, state.TableACLPolicies), nil
	})
}
