package nomad

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad/planner/plannertest"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func closedWithin(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// The queries of one state store share one wake channel; it closes when
// the store is abandoned, and the next store gets a fresh one, which
// closes when the server stops.
func TestStoreWakeClosesOnAbandonOrStop(t *testing.T) {
	var w storeWake
	stop := make(chan struct{})
	first := make(chan struct{})
	a := w.of(first, stop)
	if b := w.of(first, stop); b != a {
		t.Fatal("two queries of one store got different wake channels")
	}
	if isClosed(a) {
		t.Fatal("the wake closed before anything happened")
	}
	close(first) // a restore abandons the store
	if !closedWithin(a, 10*time.Second) {
		t.Fatal("abandoning the store did not close its wake")
	}

	second := make(chan struct{})
	c := w.of(second, stop)
	if c == a || isClosed(c) {
		t.Fatal("the new store got the abandoned store's wake")
	}
	close(stop)
	if !closedWithin(c, 10*time.Second) {
		t.Fatal("stopping the server did not close the wake")
	}
}

// A node waiting in its blocking query when a snapshot restore replaces
// the state store re-runs its query on the new store: a later change to
// its allocs there wakes it (a query left watching the old store would
// wait out its whole MaxQueryTime).
func TestBlockingQueryFollowsARestoredStore(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 10*time.Second, s)
	node := itNode("restored")
	registerNode(t, s, node)

	type answer struct {
		reply structs.NodeClientAllocsResponse
		err   error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		a.err = s.RPC("Node.GetClientAllocs", &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: node.SecretID,
			QueryOptions: structs.QueryOptions{MinQueryIndex: 1, MaxQueryTime: maxQueryTime}}, &a.reply)
		done <- a
	}()
	wait.Until(t, 10*time.Second, "the node's query to wait", func() bool { return s.BlockingQueries() == 1 })

	old := s.State()
	snap, err := s.fsm.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	if err := s.fsm.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	if s.State() == old {
		t.Fatal("the restore kept the old state store")
	}
	// Still waiting: the restored store holds no newer allocs.
	if s.BlockingQueries() != 1 {
		select {
		case a := <-done:
			t.Fatalf("the query answered on restore (index %d, %v); want it waiting on the new store", a.reply.Index, a.err)
		case <-time.After(10 * time.Second):
			t.Fatal("the query stopped counting as waiting")
		}
	}

	idx, _ := s.State().LatestIndex()
	a := plannertest.AllocOn(itJob("follow", 1), node, 100, 100)
	if err := s.State().Write(idx+1, func(tx *state.Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if got.err != nil {
			t.Fatal(got.err)
		}
		if _, ok := got.reply.Allocs[a.ID]; !ok || got.reply.Index != idx+1 {
			t.Fatalf("answer %v at index %d; want alloc %s at index %d", got.reply.Allocs, got.reply.Index, a.ID, idx+1)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a change in the restored store did not wake the query")
	}
}
