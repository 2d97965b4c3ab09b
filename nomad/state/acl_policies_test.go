package state

import (
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

func testPolicy(name string) *structs.ACLPolicy {
	return &structs.ACLPolicy{Name: name, Description: "d " + name, Rules: `namespace "default" { policy = "read" }`}
}

func policyNames(t *testing.T, list func(memdb.WatchSet) (memdb.ResultIterator, error)) []string {
	t.Helper()
	iter, err := list(nil)
	mustNoErr(t, err)
	var out []string
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		out = append(out, raw.(*structs.ACLPolicy).Name)
	}
	return out
}

func TestACLPolicyUpsertKeepsCreateIndexAndMovesTheTableIndex(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(5, func(tx *Txn) error {
		return tx.UpsertACLPolicies([]*structs.ACLPolicy{testPolicy("a"), testPolicy("b")})
	}))
	changed := testPolicy("a")
	changed.Rules = `namespace "default" { policy = "write" }`
	mustNoErr(t, s.Write(9, func(tx *Txn) error { return tx.UpsertACLPolicies([]*structs.ACLPolicy{changed}) }))

	p, err := s.ACLPolicyByName(nil, "a")
	mustNoErr(t, err)
	if p.CreateIndex != 5 || p.ModifyIndex != 9 || p.Rules != changed.Rules {
		t.Fatalf("policy a = %+v", p)
	}
	if changed.ModifyIndex != 0 {
		t.Fatal("the caller's policy must not be changed by the store")
	}
	if idx, _ := s.Index(TableACLPolicies); idx != 9 {
		t.Fatalf("table index = %d", idx)
	}
	if got := policyNames(t, s.ACLPolicies); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("policies = %v", got)
	}
}

func TestACLPolicyPrefixAndDelete(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error {
		return tx.UpsertACLPolicies([]*structs.ACLPolicy{testPolicy("dev"), testPolicy("dev-ops"), testPolicy("prod")})
	}))
	if got := policyNames(t, func(ws memdb.WatchSet) (memdb.ResultIterator, error) { return s.ACLPoliciesByNamePrefix(ws, "dev") }); len(got) != 2 {
		t.Fatalf("prefix dev = %v", got)
	}
	ws := memdb.NewWatchSet()
	_, err := s.ACLPolicyByName(ws, "dev")
	mustNoErr(t, err)
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.DeleteACLPolicies([]string{"dev", "never-existed"}) }))
	if timedOut := ws.Watch(time.After(10 * time.Second)); timedOut {
		t.Fatal("deleting a watched policy must wake the watcher")
	}
	if p, _ := s.ACLPolicyByName(nil, "dev"); p != nil {
		t.Fatal("policy dev is still there")
	}
	if got := policyNames(t, s.ACLPolicies); len(got) != 2 {
		t.Fatalf("left = %v", got)
	}
	if idx, _ := s.Index(TableACLPolicies); idx != 2 {
		t.Fatalf("table index = %d", idx)
	}
}

func TestACLPolicyWithoutANameChangesNothing(t *testing.T) {
	s := testStateStore(t)
	err := s.Write(3, func(tx *Txn) error { return tx.UpsertACLPolicies([]*structs.ACLPolicy{testPolicy("ok"), {Rules: "x"}}) })
	if err == nil {
		t.Fatal("a nameless policy must be refused")
	}
	if p, _ := s.ACLPolicyByName(nil, "ok"); p != nil {
		t.Fatal("the entry must be all or nothing")
	}
}
