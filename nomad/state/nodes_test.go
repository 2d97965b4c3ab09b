package state

import (
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

func TestNodeLookupsByEachIndex(t *testing.T) {
	s := testStateStore(t)
	for i, id := range []string{"aa11", "aa22", "bb33"} {
		n := testNode(id)
		if id == "bb33" {
			n.NodePool = "gpu"
		}
		mustNoErr(t, s.Write(uint64(10+i), func(tx *Txn) error { return tx.UpsertNode(n, nil) }))
	}
	byID, err := s.NodeByID(nil, "aa22")
	mustNoErr(t, err)
	if byID == nil || byID.Name != "node-aa22" || byID.CreateIndex != 11 || byID.ModifyIndex != 11 {
		t.Fatalf("NodeByID = %+v", byID)
	}
	bySecret, err := s.NodeBySecretID(nil, "secret-bb33")
	mustNoErr(t, err)
	if bySecret == nil || bySecret.ID != "bb33" {
		t.Fatalf("NodeBySecretID = %+v", bySecret)
	}
	for _, secret := range []string{"secret-zz", ""} {
		if missing, _ := s.NodeBySecretID(nil, secret); missing != nil {
			t.Fatalf("NodeBySecretID(%q) = %s, want nil", secret, missing.ID)
		}
	}
	if missing, _ := s.NodeByID(nil, "zz"); missing != nil {
		t.Fatalf("NodeByID of unknown node = %+v, want nil", missing)
	}
	cases := []struct {
		name string
		iter func() (memdb.ResultIterator, error)
		want string
	}{
		{"prefix aa finds two nodes", func() (memdb.ResultIterator, error) { return s.NodesByIDPrefix(nil, "aa") }, "[aa11 aa22]"},
		{"empty prefix finds all", func() (memdb.ResultIterator, error) { return s.NodesByIDPrefix(nil, "") }, "[aa11 aa22 bb33]"},
		{"pool gpu finds one", func() (memdb.ResultIterator, error) { return s.NodesByNodePool(nil, "gpu") }, "[bb33]"},
		{"Nodes lists all", func() (memdb.ResultIterator, error) { return s.Nodes(nil) }, "[aa11 aa22 bb33]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			iter, err := tc.iter()
			mustNoErr(t, err)
			var got []string
			for raw := iter.Next(); raw != nil; raw = iter.Next() {
				got = append(got, raw.(*structs.Node).ID)
			}
			if fmtSet(got) != tc.want {
				t.Fatalf("got %v, want %s", got, tc.want)
			}
		})
	}
	if idx, _ := s.Index(TableNodes); idx != 12 {
		t.Fatalf("nodes index = %d, want 12", idx)
	}
}

func TestReRegisteringNodeKeepsServerOwnedFields(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	drain := &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}
	ev := &structs.NodeEvent{Message: "drain started", Subsystem: structs.NodeEventSubsystemDrain}
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpdateNodeDrain("n1", drain, false, 500, ev, DrainOperator{}) }))

	again := testNode("n1")
	again.Attributes = structs.NewAttributes(map[string]string{"kernel.name": "linux"})
	again.Events = []*structs.NodeEvent{{Message: "a client cannot rewrite history"}}
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertNode(again, &structs.NodeEvent{Message: "Node re-registered"}) }))

	got, _ := s.NodeByID(nil, "n1")
	if got.CreateIndex != 1 || got.ModifyIndex != 3 {
		t.Fatalf("indexes = %d/%d, want 1/3", got.CreateIndex, got.ModifyIndex)
	}
	if got.DrainStrategy == nil || !got.Drain || got.SchedulingEligibility != structs.NodeSchedulingIneligible {
		t.Fatalf("drain not preserved: %+v", got)
	}
	if len(got.Events) != 2 || got.Events[0].CreateIndex != 2 || got.Events[1].Message != "Node re-registered" || got.Events[1].CreateIndex != 3 {
		t.Fatalf("events = %+v", got.Events)
	}
	if got.Attributes.Value("kernel.name") != "linux" {
		t.Fatalf("fingerprint not updated: %v", got.Attributes)
	}
	if got.LastDrain == nil || got.LastDrain.Status != DrainStatusDraining {
		t.Fatalf("LastDrain = %+v", got.LastDrain)
	}
}

func TestNodeStatusDrainAndEligibility(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))

	mustNoErr(t, s.Write(2, func(tx *Txn) error {
		return tx.UpdateNodeStatus("n1", structs.NodeStatusDown, 1234, &structs.NodeEvent{Message: "missed heartbeat"})
	}))
	got, _ := s.NodeByID(nil, "n1")
	if got.Status != structs.NodeStatusDown || got.StatusUpdatedAt != 1234 || got.ModifyIndex != 2 || len(got.Events) != 1 {
		t.Fatalf("after status update: %+v", got)
	}
	if err := s.Write(3, func(tx *Txn) error { return tx.UpdateNodeStatus("n1", "sleeping", 1, nil) }); err == nil {
		t.Fatal("an unknown node status was accepted")
	}
	if err := s.Write(3, func(tx *Txn) error { return tx.UpdateNodeStatus("nope", structs.NodeStatusReady, 1, nil) }); !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("status of unknown node: err = %v, want ErrNotFound", err)
	}

	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.UpdateNodeDrain("n1", &structs.DrainStrategy{}, false, 10, nil, DrainOperator{})
	}))
	if err := s.Write(5, func(tx *Txn) error { return tx.UpdateNodeEligibility("n1", structs.NodeSchedulingEligible, 11, nil) }); err == nil {
		t.Fatal("a draining node was made eligible")
	}
	if got, _ := s.NodeByID(nil, "n1"); got.ModifyIndex != 4 {
		t.Fatalf("refused eligibility change wrote the node: ModifyIndex %d", got.ModifyIndex)
	}

	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpdateNodeDrain("n1", nil, false, 12, nil, DrainOperator{}) }))
	got, _ = s.NodeByID(nil, "n1")
	if got.Drain || got.DrainStrategy != nil || got.SchedulingEligibility != structs.NodeSchedulingIneligible {
		t.Fatalf("ending a drain without markEligible: %+v", got)
	}
	if got.LastDrain == nil || got.LastDrain.Status != DrainStatusComplete {
		t.Fatalf("LastDrain = %+v", got.LastDrain)
	}
	mustNoErr(t, s.Write(7, func(tx *Txn) error { return tx.UpdateNodeEligibility("n1", structs.NodeSchedulingEligible, 13, nil) }))
	if got, _ := s.NodeByID(nil, "n1"); got.SchedulingEligibility != structs.NodeSchedulingEligible {
		t.Fatalf("eligibility = %q", got.SchedulingEligibility)
	}

	mustNoErr(t, s.Write(8, func(tx *Txn) error {
		return tx.UpdateNodeDrain("n1", &structs.DrainStrategy{}, false, 14, nil, DrainOperator{})
	}))
	mustNoErr(t, s.Write(9, func(tx *Txn) error { return tx.UpdateNodeDrain("n1", nil, true, 15, nil, DrainOperator{}) }))
	if got, _ := s.NodeByID(nil, "n1"); got.SchedulingEligibility != structs.NodeSchedulingEligible {
		t.Fatalf("ending a drain with markEligible left %q", got.SchedulingEligibility)
	}
}

func TestDeleteNodeIsAllOrNothing(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertNode(testNode("n2"), nil) }))
	if err := s.Write(3, func(tx *Txn) error { return tx.DeleteNode([]string{"n1", "missing"}) }); !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if n, _ := s.NodeByID(nil, "n1"); n == nil {
		t.Fatal("n1 was deleted by a failed batch")
	}
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.DeleteNode([]string{"n1", "n2"}) }))
	if n, _ := s.NodeByID(nil, "n1"); n != nil {
		t.Fatal("n1 still there")
	}
	if idx, _ := s.Index(TableNodes); idx != 4 {
		t.Fatalf("nodes index = %d, want 4", idx)
	}
}

func TestStoredNodeIsNotTheCallersObject(t *testing.T) {
	s := testStateStore(t)
	n := testNode("n1")
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(n, nil) }))
	n.Name = "changed by caller"
	if got, _ := s.NodeByID(nil, "n1"); got.Name != "node-n1" {
		t.Fatalf("the store kept a reference to the caller's node: %q", got.Name)
	}
}

// A node's secret is its identity: no entry in the log may change it, so a
// forged or stale registration cannot take a node over even if it got
// past the endpoint.
func TestUpsertNodeRefusesToChangeTheSecret(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpsertNode(testNode("aa11"), nil) }))
	forged := testNode("aa11")
	forged.SecretID = "another-secret"
	forged.Attributes = structs.NewAttributes(map[string]string{"kernel.name": "forged"})
	err := s.Write(11, func(tx *Txn) error { return tx.UpsertNode(forged, nil) })
	if !errors.Is(err, structs.ErrNodeSecretDenied) {
		t.Fatalf("want ErrNodeSecretDenied, got %v", err)
	}
	n, _ := s.NodeByID(nil, "aa11")
	if n.SecretID != "secret-aa11" || n.ModifyIndex != 10 || n.Attributes.Value("kernel.name") == "forged" {
		t.Fatalf("a refused registration changed the node: %+v", n)
	}
	if idx, _ := s.Index(TableNodes); idx != 10 {
		t.Fatalf("nodes index moved to %d", idx)
	}
	// The same secret re-registers as before.
	mustNoErr(t, s.Write(12, func(tx *Txn) error { return tx.UpsertNode(testNode("aa11"), nil) }))
}
