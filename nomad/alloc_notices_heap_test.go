package nomad

import (
	"context"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// BenchmarkWatchAllocsRegistrationHeap measures the heap a node waiting
// for an alloc notice costs the server (compare
// BenchmarkGetClientAllocsWaiterHeap, the blocking query it replaces).
// The nodes register over one real multiplexed session, opened before
// the measurement as a client's session is open for its heartbeats
// anyway; a finished call leaves nothing on the calling side, so the
// delta is the server's registrations.
func BenchmarkWatchAllocsRegistrationHeap(b *testing.B) {
	const n = 2000
	s := testServer(b, nil)
	WaitForLeader(b, 10*time.Second, s)
	nodes := registerHeapNodes(b, s, n, "watcher")
	pool := rpcx.NewConnPool(rpcx.PoolConfig{})
	defer pool.Shutdown()
	ctx := context.Background()
	register := func(node *structs.Node) {
		args := &structs.NodeWatchAllocsRequest{NodeID: node.ID, SecretID: node.SecretID}
		var reply structs.NodeWatchAllocsResponse
		if err := pool.RPC(ctx, s.RPCAddr(), "Node.WatchAllocs", args, &reply); err != nil {
			b.Fatal(err)
		}
	}
	register(nodes[0]) // opens the session
	b.ResetTimer()
	var perNode float64
	for i := 0; i < b.N; i++ {
		s.allocNotices.mu.Lock()
		clear(s.allocNotices.entries)
		s.allocNotices.mu.Unlock()
		before := liveHeap()
		for _, node := range nodes {
			register(node)
		}
		after := liveHeap()
		if got := s.allocNotices.registered(); got != n {
			b.Fatalf("%d nodes registered, want %d", got, n)
		}
		perNode = float64(int64(after)-int64(before)) / n
	}
	b.ReportMetric(perNode, "B/node")
}
