package state

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// The id index's keys carry no terminator (id_index.go), so go-memdb's
// Get and DeleteAll, which seek by prefix, would also reach every ID the
// one given is a prefix of. Deletes by ID are exact.
func TestDeletingAServiceRegistrationLeavesTheOnesItsIDPrefixes(t *testing.T) {
	s := svcFixture(t)
	longer := svcReg("a1")
	longer.ID += "-2"
	_, err := writeResult(s, 6, func(tx *Txn) (int, error) {
		return tx.UpsertServiceRegistrations([]*structs.ServiceRegistration{longer})
	})
	mustNoErr(t, err)
	mustNoErr(t, s.Write(7, func(tx *Txn) error { return tx.DeleteServiceRegistrations([]string{svcReg("a1").ID}) }))
	regs, err := s.ServiceRegistrationsByName(nil, structs.DefaultNamespace, "web")
	mustNoErr(t, err)
	var got []string
	for _, r := range regs {
		got = append(got, r.ID)
	}
	want := map[string]bool{longer.ID: true, svcReg("a2").ID: true}
	if len(got) != len(want) {
		t.Fatalf("after deleting %s: %v, want %v", svcReg("a1").ID, got, want)
	}
	for _, id := range got {
		if !want[id] {
			t.Fatalf("after deleting %s: %v, want %v", svcReg("a1").ID, got, want)
		}
	}
}

func TestDeletingANodesDeletedAllocsRowLeavesTheOnesItsIDPrefixes(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertNode(testNode("n10"), nil) }))
	txn := s.db.Txn(true)
	mustNoErr(t, setNodeAllocsDeletedIndexes(txn, 10, map[string]struct{}{"n1": {}, "n10": {}}))
	mustNoErr(t, deleteNodeAllocsDeletedIndex(txn, "n1"))
	txn.Commit()
	if got, _ := s.NodeAllocsDeletedIndex(nil, "n10"); got != 10 {
		t.Fatalf("node n10's deleted-allocs index = %d after deleting n1's, want 10", got)
	}
	if got, _ := s.NodeAllocsDeletedIndex(nil, "n1"); got != 0 {
		t.Fatalf("node n1's deleted-allocs index = %d after deleting it, want 0", got)
	}
}
