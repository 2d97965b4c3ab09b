package nomad

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// BenchmarkGetClientAllocsWaiterHeap measures the heap a node waiting in
// its Node.GetClientAllocs blocking query costs: every client of a fleet
// holds one open at all times, so this is paid per node. The figure
// (B/waiter) includes the in-process caller's own goroutine and request,
// which are the same whatever the server does; compare it between
// versions of the server rather than against the bench's per-node total.
func BenchmarkGetClientAllocsWaiterHeap(b *testing.B) {
	const n = 2000
	s := testServer(b, nil)
	WaitForLeader(b, 10*time.Second, s)
	nodes := registerHeapNodes(b, s, n, "waiter")
	b.ResetTimer()
	var perWaiter float64
	for i := 0; i < b.N; i++ {
		before := liveHeap()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for _, node := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A node with no allocs answers at index 1: waiting
				// for a newer one blocks until the call ends.
				args := &structs.NodeSpecificRequest{NodeID: node.ID, SecretID: node.SecretID,
					QueryOptions: structs.QueryOptions{MinQueryIndex: 1, MaxQueryTime: maxQueryTime}}
				var reply structs.NodeClientAllocsResponse
				if err := s.RPCContext(ctx, "Node.GetClientAllocs", args, &reply); err != nil && ctx.Err() == nil {
					errs <- err
				}
			}()
		}
		wait.Until(b, 60*time.Second, "every node to wait in its query", func() bool { return s.BlockingQueries() == n })
		after := liveHeap()
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		perWaiter = float64(int64(after)-int64(before)) / n
	}
	b.ReportMetric(perWaiter, "B/waiter")
}

// watch answers true only when a watched channel fires, and false when
// the caller's context ends or the wait's time is up, whether it selects
// on the set directly or (past watchFewMax channels) through memdb.
func TestWatchTellsAChangeFromTheEndOfTheWait(t *testing.T) {
	for _, size := range []int{1, watchFewMax, watchFewMax + 3} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			set := func() (memdb.WatchSet, []chan struct{}) {
				ws := memdb.NewWatchSet()
				chs := make([]chan struct{}, size)
				for i := range chs {
					chs[i] = make(chan struct{})
					ws.Add(chs[i])
				}
				return ws, chs
			}
			never := make(chan struct{})

			ws, chs := set()
			close(chs[size-1])
			if !watch(context.Background(), never, ws) {
				t.Fatal("a fired channel did not end the wait with a change")
			}

			ws, _ = set()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if watch(ctx, never, ws) {
				t.Fatal("an ended caller was taken for a change")
			}

			ws, _ = set()
			expired := make(chan struct{})
			close(expired)
			if watch(context.Background(), expired, ws) {
				t.Fatal("the end of the wait was taken for a change")
			}
		})
	}
}

// registerHeapNodes registers n nodes named <prefix>-0000… for a heap
// benchmark and returns them.
func registerHeapNodes(b *testing.B, s *Server, n int, prefix string) []*structs.Node {
	b.Helper()
	nodes := make([]*structs.Node, n)
	for i := range nodes {
		nodes[i] = itNode(fmt.Sprintf("%s-%04d", prefix, i))
		var resp structs.NodeUpdateResponse
		if err := s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: nodes[i]}, &resp); err != nil {
			b.Fatal(err)
		}
	}
	return nodes
}
