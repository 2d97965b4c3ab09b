package nomad

import (
	"fmt"
	"strconv"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// aclCacheSize bounds the compiled ACLs a server keeps. Tokens that share
// policies share an entry, so a few hundred cover a large cluster.
const aclCacheSize = 512

// aclResolver turns token secrets into ACLs. Compiling an ACL means
// parsing every policy of the token, so compiled ACLs are cached, keyed by
// the policies that went into them with their create and modify indexes:
// a changed or re-created policy makes a new key, so the cache never
// needs invalidating, and an LRU bound keeps stale keys from piling up.
// Looking the token itself up is never cached, so a deleted or expired
// token stops resolving at once.
type aclResolver struct {
	cache *lru.Cache[string, *acl.ACL]
}

func newACLResolver() *aclResolver {
	c, err := lru.New[string, *acl.ACL](aclCacheSize)
	if err != nil {
		panic(fmt.Sprintf("nomad: creating the ACL cache: %v", err))
	}
	return &aclResolver{cache: c}
}

// ResolveToken returns what the holder of secret may do, for the
// enforcement layer to ask before acting on a request:
//
//   - ACLs disabled: a nil ACL and nil error. acl's methods allow
//     everything on a nil ACL, so callers need no special case.
//   - An empty secret: the anonymous policy's ACL if an operator created
//     one, else an ACL that allows nothing.
//   - An unknown or expired secret: structs.ErrTokenNotFound.
//   - A management token: acl.ManagementACL.
//
// It reads this server's state (as Nomad does, followers answer from
// their replica) and is cheap enough to call on every request.
func (s *Server) ResolveToken(secret string) (*acl.ACL, error) {
	if !s.config.ACLEnabled {
		return nil, nil
	}
	_, a, err := s.resolveSecret(s.State(), secret)
	return a, err
}

// resolveSecret returns the token a secret names (the anonymous token for
// "") and its ACL, whether or not ACLs are enabled.
func (s *Server) resolveSecret(st *state.StateStore, secret string) (*structs.ACLToken, *acl.ACL, error) {
	if secret == "" {
		tok := structs.AnonymousACLToken()
		a, err := s.acls.compile(st, tok.Policies)
		return tok, a, err
	}
	tok, err := s.tokenBySecret(st, secret)
	if err != nil {
		return nil, nil, err
	}
	if tok.IsManagement() {
		return tok, acl.ManagementACL, nil
	}
	a, err := s.acls.compile(st, tok.Policies)
	return tok, a, err
}

// tokenBySecret finds a live token by its secret, or ErrTokenNotFound.
func (s *Server) tokenBySecret(st *state.StateStore, secret string) (*structs.ACLToken, error) {
	tok, err := st.ACLTokenBySecretHash(nil, structs.HashACLSecret(secret))
	if err != nil {
		return nil, err
	}
	if tok == nil || tok.IsExpired(s.clock.Now()) {
		return nil, structs.ErrTokenNotFound
	}
	return tok, nil
}

// compile returns the ACL of the named policies that exist. A policy that
// no longer parses fails the resolution rather than being skipped: it
// might hold the deny that other policies' grants depend on.
func (r *aclResolver) compile(st *state.StateStore, names []string) (*acl.ACL, error) {
	policies, err := st.ACLPoliciesByNames(nil, names)
	if err != nil {
		return nil, err
	}
	var key strings.Builder
	key.Grow(len(policies) * 32)
	for _, p := range policies {
		key.WriteString(p.Name)
		key.WriteByte(0)
		key.WriteString(strconv.FormatUint(p.CreateIndex, 36))
		key.WriteByte(0)
		key.WriteString(strconv.FormatUint(p.ModifyIndex, 36))
		key.WriteByte(0)
	}
	k := key.String()
	if a, ok := r.cache.Get(k); ok {
		return a, nil
	}
	parsed := make([]*acl.Policy, 0, len(policies))
	for _, p := range policies {
		pp, err := acl.Parse(p.Rules)
		if err != nil {
			return nil, fmt.Errorf("ACL policy %q cannot be parsed, so tokens naming it do not resolve: %v", p.Name, err)
		}
		parsed = append(parsed, pp)
	}
	a := acl.NewACL(false, parsed)
	r.cache.Add(k, a)
	return a, nil
}
