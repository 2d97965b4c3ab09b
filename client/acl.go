package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// tokenCacheSize bounds the tokens a client remembers. Each entry is a
// compiled ACL, small and shared by tokens of the same policies only
// through the servers' cache, so a few hundred keep a busy node's log
// readers from asking the servers on every request without letting a
// flood of made-up tokens grow the client.
const tokenCacheSize = 256

// ErrACLUnresolvable is the refusal of a client request whose token the
// client could not check because no server answered: the client fails
// closed rather than guess.
var ErrACLUnresolvable = errors.New("the ACL token could not be checked")

// tokenCache resolves ACL tokens for the client's own endpoints (logs, the
// allocation directory, signals, stats), which the client answers itself:
// it asks the servers' ACL.ResolveToken and compiles the answer with
// acl.Compile. A resolved token is remembered for the shorter of
// acl.token_ttl and acl.policy_ttl (its ACL depends on both), and never
// past the token's own expiry, so a deleted token or a changed policy
// takes effect on a client within that time, as in Nomad. An unknown
// token is not remembered. When no server answers and the token is not
// remembered, the request is refused.
type tokenCache struct {
	rpc    config.RPCer
	region string
	clock  clock.Clock
	ttl    time.Duration
	cache  *lru.Cache[string, cachedACL]
}

type cachedACL struct {
	acl     *acl.ACL
	expires time.Time
}

func newTokenCache(rpc config.RPCer, region string, clk clock.Clock, tokenTTL, policyTTL time.Duration) *tokenCache {
	c, err := lru.New[string, cachedACL](tokenCacheSize)
	if err != nil {
		panic(fmt.Sprintf("client: creating the token cache: %v", err))
	}
	return &tokenCache{rpc: rpc, region: region, clock: clk, ttl: min(tokenTTL, policyTTL), cache: c}
}

// resolve returns what the holder of secret may do ("" is the anonymous
// token). Entries are keyed by the secret's hash, so the cache holds no
// secret.
func (t *tokenCache) resolve(ctx context.Context, secret string) (*acl.ACL, error) {
	key := structs.HashACLSecret(secret)
	now := t.clock.Now()
	if e, ok := t.cache.Get(key); ok && now.Before(e.expires) {
		return e.acl, nil
	}
	args := structs.ResolveACLTokenRequest{SecretID: secret, QueryOptions: structs.QueryOptions{Region: t.region, AllowStale: true}}
	var out structs.ResolveACLTokenResponse
	if err := t.rpc.RPC(ctx, "ACL.ResolveToken", &args, &out); err != nil {
		t.cache.Remove(key)
		if errors.Is(err, structs.ErrTokenNotFound) {
			return nil, structs.ErrTokenNotFound
		}
		if errors.Is(err, structs.ErrACLDisabled) {
			return nil, fmt.Errorf("%w: this client has acl.enabled but its servers do not; set the same acl.enabled on every agent", ErrACLUnresolvable)
		}
		return nil, fmt.Errorf("%w, so the request is refused: %v", ErrACLUnresolvable, err)
	}
	if out.Token == nil {
		return nil, fmt.Errorf("%w: the servers answered no token", ErrACLUnresolvable)
	}
	rules := make([]string, 0, len(out.Policies))
	for _, p := range out.Policies {
		rules = append(rules, p.Rules)
	}
	a, err := acl.Compile(out.Token.IsManagement(), rules...)
	if err != nil {
		return nil, fmt.Errorf("%w: its policies do not compile: %v", ErrACLUnresolvable, err)
	}
	expires := now.Add(t.ttl)
	if exp := out.Token.ExpirationTime; exp != nil && exp.Before(expires) {
		expires = *exp
	}
	t.cache.Add(key, cachedACL{acl: a, expires: expires})
	return a, nil
}

// ResolveToken returns what the holder of secret may do on this client's
// own endpoints: nil (everything) while ACLs are off, else the token's
// ACL (see tokenCache). An unknown or expired token is
// structs.ErrTokenNotFound; a token that cannot be checked because no
// server answers is ErrACLUnresolvable.
func (c *Client) ResolveToken(ctx context.Context, secret string) (*acl.ACL, error) {
	if c.tokens == nil {
		return nil, nil
	}
	return c.tokens.resolve(ctx, secret)
}

// LocalAlloc returns the client's view of the allocation it runs or keeps
// with this ID, or nil.
func (c *Client) LocalAlloc(id string) *structs.Allocation {
	ar := c.runner(id)
	if ar == nil {
		return nil
	}
	return ar.Alloc()
}
