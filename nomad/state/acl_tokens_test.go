package state

import (
	"strings"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

func testToken(accessor, secret string, policies ...string) *structs.ACLToken {
	typ := structs.ACLClientToken
	if len(policies) == 0 {
		typ = structs.ACLManagementToken
	}
	return &structs.ACLToken{
		AccessorID: accessor, SecretID: secret, SecretHash: structs.HashACLSecret(secret),
		Name: "token " + accessor, Type: typ, Policies: policies,
		CreateTime: time.Unix(1700000000, 0).UTC(),
	}
}

func TestACLTokensAreStoredWithoutTheirSecret(t *testing.T) {
	s := testStateStore(t)
	tok := testToken("acc-1", "secret-1", "readers")
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpsertACLTokens([]*structs.ACLToken{tok}) }))

	got, err := s.ACLTokenBySecretHash(nil, structs.HashACLSecret("secret-1"))
	mustNoErr(t, err)
	if got == nil || got.AccessorID != "acc-1" {
		t.Fatalf("lookup by the secret's hash = %+v", got)
	}
	if got.SecretID != "" {
		t.Fatalf("the store holds the secret %q", got.SecretID)
	}
	if tok.SecretID != "secret-1" {
		t.Fatal("the caller's token must not be changed")
	}
	if got.CreateIndex != 4 || got.ModifyIndex != 4 {
		t.Fatalf("indexes = %d/%d", got.CreateIndex, got.ModifyIndex)
	}
	if miss, _ := s.ACLTokenBySecretHash(nil, structs.HashACLSecret("secret-2")); miss != nil {
		t.Fatal("another secret must not find the token")
	}
	if miss, _ := s.ACLTokenBySecretHash(nil, ""); miss != nil {
		t.Fatal("an empty hash must find nothing")
	}
}

func TestACLTokenWritesThatWouldBreakSecretsAreRefused(t *testing.T) {
	cases := []struct {
		name  string
		write func(s *StateStore) error
		want  string
	}{
		{"a token without a secret hash", func(s *StateStore) error {
			t := testToken("acc-2", "x")
			t.SecretHash = ""
			return s.Write(5, func(tx *Txn) error { return tx.UpsertACLTokens([]*structs.ACLToken{t}) })
		}, "no secret hash"},
		{"a second token with the same secret", func(s *StateStore) error {
			return s.Write(5, func(tx *Txn) error { return tx.UpsertACLTokens([]*structs.ACLToken{testToken("acc-2", "secret-1")}) })
		}, "already the secret of another token"},
		{"an update that changes the secret", func(s *StateStore) error {
			return s.Write(5, func(tx *Txn) error {
				return tx.UpsertACLTokens([]*structs.ACLToken{testToken("acc-1", "secret-other")})
			})
		}, "cannot change"},
		{"a token without an accessor", func(s *StateStore) error {
			return s.Write(5, func(tx *Txn) error { return tx.UpsertACLTokens([]*structs.ACLToken{testToken("", "secret-9")}) })
		}, "no accessor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			mustNoErr(t, s.Write(4, func(tx *Txn) error {
				return tx.UpsertACLTokens([]*structs.ACLToken{testToken("acc-1", "secret-1", "p")})
			}))
			err := tc.write(s)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error about %q", err, tc.want)
			}
			if idx, _ := s.Index(TableACLTokens); idx != 4 {
				t.Fatalf("a refused write moved the index to %d", idx)
			}
		})
	}
}

func TestACLTokenUpdateKeepsCreateIndexAndDeleteWakesWatchers(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.UpsertACLTokens([]*structs.ACLToken{testToken("acc-1", "secret-1", "a"), testToken("acc-2", "secret-2", "a")})
	}))
	upd := testToken("acc-1", "secret-1", "a", "b")
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpsertACLTokens([]*structs.ACLToken{upd}) }))
	got, _ := s.ACLTokenByAccessorID(nil, "acc-1")
	if got.CreateIndex != 4 || got.ModifyIndex != 6 || len(got.Policies) != 2 {
		t.Fatalf("updated token = %+v", got)
	}
	ws := memdb.NewWatchSet()
	_, _ = s.ACLTokenBySecretHash(ws, structs.HashACLSecret("secret-2"))
	mustNoErr(t, s.Write(7, func(tx *Txn) error { return tx.DeleteACLTokens([]string{"acc-2", "unknown"}) }))
	if timedOut := ws.Watch(time.After(10 * time.Second)); timedOut {
		t.Fatal("deleting a token must wake a query watching its secret")
	}
	if gone, _ := s.ACLTokenBySecretHash(nil, structs.HashACLSecret("secret-2")); gone != nil {
		t.Fatal("a deleted token still resolves")
	}
	iter, err := s.ACLTokensByAccessorPrefix(nil, "acc-")
	mustNoErr(t, err)
	n := 0
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		n++
	}
	if n != 1 {
		t.Fatalf("%d tokens left, want 1", n)
	}
}

func TestACLBootstrapHappensOnceUnlessReset(t *testing.T) {
	s := testStateStore(t)
	if idx, _ := s.ACLBootstrapIndex(); idx != 0 {
		t.Fatalf("a new store is bootstrapped at %d", idx)
	}
	mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.BootstrapACLToken(0, testToken("boot-1", "s1")) }))
	if idx, _ := s.ACLBootstrapIndex(); idx != 10 {
		t.Fatalf("bootstrap index = %d", idx)
	}

	err := s.Write(11, func(tx *Txn) error { return tx.BootstrapACLToken(0, testToken("boot-2", "s2")) })
	if err == nil || !strings.Contains(err.Error(), "ACL bootstrap already done (reset index: 10)") {
		t.Fatalf("second bootstrap: %v", err)
	}
	err = s.Write(11, func(tx *Txn) error { return tx.BootstrapACLToken(9, testToken("boot-2", "s2")) })
	if err == nil {
		t.Fatal("a bootstrap with the wrong reset index must be refused")
	}
	if tok, _ := s.ACLTokenByAccessorID(nil, "boot-2"); tok != nil {
		t.Fatal("a refused bootstrap stored its token")
	}

	mustNoErr(t, s.Write(12, func(tx *Txn) error { return tx.BootstrapACLToken(10, testToken("boot-2", "s2")) }))
	if idx, _ := s.ACLBootstrapIndex(); idx != 12 {
		t.Fatalf("bootstrap index after the reset = %d", idx)
	}
	// The old reset index is spent.
	if err := s.Write(13, func(tx *Txn) error { return tx.BootstrapACLToken(10, testToken("boot-3", "s3")) }); err == nil {
		t.Fatal("a reset index can be used once")
	}
}

func TestACLTablesSurviveARestore(t *testing.T) {
	src := testStateStore(t)
	mustNoErr(t, src.Write(1, func(tx *Txn) error { return tx.UpsertACLPolicies([]*structs.ACLPolicy{testPolicy("readers")}) }))
	mustNoErr(t, src.Write(2, func(tx *Txn) error { return tx.BootstrapACLToken(0, testToken("boot", "s0")) }))
	exp := time.Unix(1800000000, 0).UTC()
	tok := testToken("acc-1", "secret-1", "readers")
	tok.ExpirationTime = &exp
	mustNoErr(t, src.Write(3, func(tx *Txn) error { return tx.UpsertACLTokens([]*structs.ACLToken{tok}) }))
	snap, err := src.Snapshot()
	mustNoErr(t, err)

	dst := testStateStore(t)
	r, err := dst.Restore()
	mustNoErr(t, err)
	for _, it := range []struct {
		iter func(memdb.WatchSet) (memdb.ResultIterator, error)
		put  func(any) error
	}{
		{snap.ACLPolicies, func(o any) error { return r.ACLPolicyRestore(o.(*structs.ACLPolicy)) }},
		{snap.ACLTokens, func(o any) error { return r.ACLTokenRestore(o.(*structs.ACLToken)) }},
		{func(memdb.WatchSet) (memdb.ResultIterator, error) { return snap.Indexes() }, func(o any) error { return r.IndexRestore(o.(*IndexEntry)) }},
	} {
		iter, err := it.iter(nil)
		mustNoErr(t, err)
		for raw := iter.Next(); raw != nil; raw = iter.Next() {
			mustNoErr(t, it.put(raw))
		}
	}
	mustNoErr(t, r.Commit())

	got, _ := dst.ACLTokenBySecretHash(nil, structs.HashACLSecret("secret-1"))
	if got == nil || got.ExpirationTime == nil || !got.ExpirationTime.Equal(exp) || got.Policies[0] != "readers" {
		t.Fatalf("restored token = %+v", got)
	}
	if p, _ := dst.ACLPolicyByName(nil, "readers"); p == nil || p.CreateIndex != 1 {
		t.Fatalf("restored policy = %+v", p)
	}
	if idx, _ := dst.ACLBootstrapIndex(); idx != 2 {
		t.Fatalf("restored bootstrap index = %d", idx)
	}
}
