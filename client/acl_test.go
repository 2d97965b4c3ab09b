package client

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// fakeResolver answers ACL.ResolveToken from a table of secrets, counting
// the calls; down makes every call fail as an unreachable server would.
type fakeResolver struct {
	mu     sync.Mutex
	tokens map[string]*structs.ResolveACLTokenResponse
	calls  int
	down   bool
}

func (f *fakeResolver) RPC(_ context.Context, method string, args, reply any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if method != "ACL.ResolveToken" {
		return errors.New("unexpected " + method)
	}
	f.calls++
	if f.down {
		return errors.New("dial tcp 127.0.0.1:4647: connect: connection refused")
	}
	out, ok := f.tokens[args.(*structs.ResolveACLTokenRequest).SecretID]
	if !ok {
		return rpcx.NewRemoteError(structs.ErrTokenNotFound) // as the servers' answer arrives
	}
	*reply.(*structs.ResolveACLTokenResponse) = *out
	return nil
}

func (f *fakeResolver) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func readerToken(expires *time.Time) *structs.ResolveACLTokenResponse {
	return &structs.ResolveACLTokenResponse{
		Token:    &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"logs"}, ExpirationTime: expires},
		Policies: []*structs.ACLPolicy{{Name: "logs", Rules: `namespace "default" { capabilities = ["read-logs"] }`}},
	}
}

// A client resolves a token through the servers once, then answers from
// its cache until the shorter TTL passes; an unknown token is asked about
// every time; a token is never remembered past its own expiry; and with
// no server to ask, a token it does not remember is refused.
func TestTokenCacheResolvesThroughTheServersAndFailsClosed(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	soon := clk.Now().Add(5 * time.Second)
	rpc := &fakeResolver{tokens: map[string]*structs.ResolveACLTokenResponse{
		"reader":   readerToken(nil),
		"shortish": readerToken(&soon),
		"":         {Token: structs.AnonymousACLToken()},
		"root":     {Token: &structs.ACLToken{Type: structs.ACLManagementToken}},
	}}
	c := newTokenCache(rpc, "global", clk, time.Minute, 30*time.Second)
	ctx := context.Background()

	a, err := c.resolve(ctx, "reader")
	if err != nil || !a.AllowNamespaceOperation("default", "read-logs") || a.AllowNamespaceOperation("default", "read-fs") {
		t.Fatalf("reader: %v, %v", a, err)
	}
	if _, err := c.resolve(ctx, "reader"); err != nil || rpc.count() != 1 {
		t.Fatalf("a second resolve within the TTL asked the servers again (%d calls): %v", rpc.count(), err)
	}
	clk.Advance(31 * time.Second) // past policy_ttl, the shorter
	if _, err := c.resolve(ctx, "reader"); err != nil || rpc.count() != 2 {
		t.Fatalf("after the TTL: %d calls, %v; want a fresh resolve", rpc.count(), err)
	}

	if _, err := c.resolve(ctx, "shortish"); err != nil {
		t.Fatal(err)
	}
	clk.Advance(6 * time.Second)
	n := rpc.count()
	if _, err := c.resolve(ctx, "shortish"); err != nil || rpc.count() != n+1 {
		t.Fatalf("a token past its expiry was answered from the cache (%d calls): %v", rpc.count()-n, err)
	}

	for i := 0; i < 2; i++ {
		if _, err := c.resolve(ctx, "made-up"); !errors.Is(err, structs.ErrTokenNotFound) {
			t.Fatalf("an unknown token: %v", err)
		}
	}
	if anon, err := c.resolve(ctx, ""); err != nil || anon.AllowNamespaceOperation("default", "read-job") {
		t.Fatalf("the anonymous token without an anonymous policy: %v, %v", anon, err)
	}
	if root, err := c.resolve(ctx, "root"); err != nil || !root.IsManagement() {
		t.Fatalf("a management token: %v, %v", root, err)
	}

	// The servers go away: a remembered token still answers until its
	// entry expires; then, and for any other token, the client refuses.
	rpc.mu.Lock()
	rpc.down = true
	rpc.mu.Unlock()
	if _, err := c.resolve(ctx, "root"); err != nil {
		t.Fatalf("a remembered token while the servers are away: %v", err)
	}
	if _, err := c.resolve(ctx, "other"); !errors.Is(err, ErrACLUnresolvable) {
		t.Fatalf("an unremembered token without servers: %v; want %v", err, ErrACLUnresolvable)
	}
	clk.Advance(time.Minute)
	if a, err := c.resolve(ctx, "root"); !errors.Is(err, ErrACLUnresolvable) || a != nil {
		t.Fatalf("an expired entry without servers: %v, %v; want a refusal", a, err)
	}
}

// The cache is bounded: a flood of distinct tokens cannot grow it.
func TestTokenCacheIsBounded(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_800_000_000, 0))
	rpc := &fakeResolver{tokens: map[string]*structs.ResolveACLTokenResponse{}}
	for i := 0; i < 3*tokenCacheSize; i++ {
		rpc.tokens[structs.GenerateUUID()] = readerToken(nil)
	}
	c := newTokenCache(rpc, "global", clk, time.Hour, time.Hour)
	for secret := range rpc.tokens {
		if _, err := c.resolve(context.Background(), secret); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.cache.Len(); n != tokenCacheSize {
		t.Fatalf("the cache holds %d entries, want at most %d", n, tokenCacheSize)
	}
}
