package nomad

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
)

// A stopped server is not kept alive by the shared deadline of a long
// blocking query it was serving: that timer runs on for up to the wait's
// length, and held by value in the server it pinned the whole server (its
// state, every node and alloc) for as long.
func TestAStoppedServerIsNotPinnedByALongQueryDeadline(t *testing.T) {
	s, err := NewServer(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	WaitForLeader(t, 10*time.Second, s)
	node := itNode("n1")
	registerNode(t, s, node)
	done := make(chan error, 1)
	go func() {
		// A node with no allocs answers at index 1: waiting for a newer
		// one blocks until the call ends.
		req := &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: node.SecretID,
			QueryOptions: structs.QueryOptions{MinQueryIndex: 1, MaxQueryTime: maxQueryTime}}
		done <- s.RPC("Node.GetClientAllocs", req, &structs.NodeClientAllocsResponse{})
	}()
	wait.Until(t, 10*time.Second, "the query to wait on a shared deadline", func() bool { return s.queryDeadlines.pending() > 0 })
	s.Shutdown()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the query did not end with the server")
	}
	if s.queryDeadlines.pending() == 0 {
		t.Fatal("the shared deadline's timer should still be pending: the test would prove nothing")
	}
	gone := weak.Make(s)
	s = nil
	wait.Until(t, 30*time.Second, "the stopped server to be collected", func() bool {
		runtime.GC()
		return gone.Value() == nil
	})
}
