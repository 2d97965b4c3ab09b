package nomad

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// waitingRead is a KV read that blocks: its minimum index is far ahead.
func waitingRead(s *Server) *structs.GenericReadRequest {
	idx, _ := s.State().LatestIndex()
	return &structs.GenericReadRequest{Key: "k", QueryOptions: structs.QueryOptions{
		MinQueryIndex: idx + 1_000_000, MaxQueryTime: 5 * time.Minute, AllowStale: true}}
}

// asUser is a context for an in-process call made on behalf of ip, as the
// HTTP API makes them.
func asUser(ctx context.Context, ip string) context.Context {
	return rpcx.WithPeer(ctx, rpcx.Peer{Addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}})
}

func waitingCount(s *Server, ip string) (int, int) {
	var addr netip.Addr
	if ip != "" {
		addr = netip.MustParseAddr(ip)
	}
	return s.blockingLimits.waiting(addr)
}

func TestBlockingQueryEndsWhenItsCallerGoesAway(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)

	ctx, cancel := context.WithCancel(asUser(context.Background(), "192.0.2.1"))
	done := make(chan error, 1)
	go func() { done <- s.RPCContext(ctx, "KV.Read", waitingRead(s), &structs.GenericReadResponse{}) }()
	WaitFor(t, 5*time.Second, func() (bool, string) {
		total, mine := waitingCount(s, "192.0.2.1")
		return total == 1 && mine == 1, fmt.Sprintf("%d waiting, %d of them the user's", total, mine)
	})
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the blocking query went on waiting after its caller went away")
	}
	if total, _ := waitingCount(s, ""); total != 0 {
		t.Fatalf("%d blocking queries still counted after the only one ended", total)
	}
}

func TestBlockingQueryOverTheWireEndsWhenItsCallerGivesUp(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	pool := rpcx.NewConnPool(rpcx.PoolConfig{})
	defer pool.Shutdown()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- pool.RPC(ctx, s.RPCAddr(), "KV.Read", waitingRead(s), &structs.GenericReadResponse{})
	}()
	WaitFor(t, 5*time.Second, func() (bool, string) {
		total, mine := waitingCount(s, "127.0.0.1")
		return total == 1 && mine == 1, fmt.Sprintf("%d waiting, %d from 127.0.0.1", total, mine)
	})
	cancel()
	<-done
	WaitFor(t, 5*time.Second, func() (bool, string) {
		total, _ := waitingCount(s, "")
		return total == 0, fmt.Sprintf("%d blocking queries still waiting on the server after the caller gave up", total)
	})
}

func TestBlockingQueriesPastTheLimitsAreRefused(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.MaxBlockingQueries = 3
		c.MaxBlockingQueriesPerClient = 2
	})
	WaitForLeader(t, 5*time.Second, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	hold := func(ip string) {
		go s.RPCContext(asUser(ctx, ip), "KV.Read", waitingRead(s), &structs.GenericReadResponse{})
	}
	hold("192.0.2.1")
	hold("192.0.2.1")
	WaitFor(t, 5*time.Second, func() (bool, string) {
		_, mine := waitingCount(s, "192.0.2.1")
		return mine == 2, fmt.Sprintf("%d waiting for 192.0.2.1", mine)
	})

	// A third from the same client is refused at once, naming the setting.
	err := s.RPCContext(asUser(ctx, "192.0.2.1"), "KV.Read", waitingRead(s), &structs.GenericReadResponse{})
	if !errors.Is(err, ErrTooManyBlockingQueries) || !strings.Contains(err.Error(), "limits.max_blocking_queries_per_client = 2") {
		t.Fatalf("third blocking query from one client: %v", err)
	}
	// The same client's ordinary reads are still answered.
	var out structs.GenericReadResponse
	if err := s.RPCContext(asUser(ctx, "192.0.2.1"), "KV.Read", &structs.GenericReadRequest{Key: "k"}, &out); err != nil {
		t.Fatalf("a non-blocking read from a client at its blocking limit: %v", err)
	}

	// Another client may wait, up to the server's total.
	hold("192.0.2.2")
	WaitFor(t, 5*time.Second, func() (bool, string) {
		total, _ := waitingCount(s, "")
		return total == 3, fmt.Sprintf("%d waiting in total", total)
	})
	err = s.RPCContext(asUser(ctx, "192.0.2.3"), "KV.Read", waitingRead(s), &structs.GenericReadResponse{})
	if !errors.Is(err, ErrTooManyBlockingQueries) || !strings.Contains(err.Error(), "limits.max_blocking_queries = 3") {
		t.Fatalf("a blocking query past the server's total: %v", err)
	}

	cancel()
	WaitFor(t, 5*time.Second, func() (bool, string) {
		total, _ := waitingCount(s, "")
		return total == 0, fmt.Sprintf("%d still counted after every caller went away", total)
	})
}

func TestForwardedBlockingQueriesCountOnlyWhereTheyArrived(t *testing.T) {
	l := newBlockingLimiter(10, 1)
	opts := &structs.QueryOptions{Forwarded: true}
	opts.SetCallContext(asUser(context.Background(), "192.0.2.9"))
	for range 3 {
		if _, err := l.acquire(blockingClient(opts)); err != nil {
			t.Fatalf("a forwarded query was counted against the forwarding server's address: %v", err)
		}
	}
	own := &structs.QueryOptions{}
	if c := blockingClient(own); c.IsValid() {
		t.Fatalf("the server's own query counted against client %s", c)
	}
	if _, err := l.acquire(netip.MustParseAddr("192.0.2.9")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.acquire(netip.MustParseAddr("192.0.2.9")); !errors.Is(err, ErrTooManyBlockingQueries) {
		t.Fatalf("second query from a client limited to one: %v", err)
	}
}

// A blocking query whose caller never goes away still ends when the server
// stops, instead of holding its goroutine until its wait runs out.
func TestBlockingQueryEndsWhenTheServerStops(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)

	args := waitingRead(s)
	args.SetCallContext(asUser(context.Background(), "192.0.2.3")) // never ends
	done := make(chan error, 1)
	go func() {
		var meta structs.QueryMeta
		done <- s.blockingQuery(&args.QueryOptions, &meta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
			return 1, nil
		})
	}()
	WaitFor(t, 5*time.Second, func() (bool, string) {
		total, _ := waitingCount(s, "192.0.2.3")
		return total == 1, fmt.Sprintf("%d waiting", total)
	})
	s.Shutdown()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the query ended with %v, want no error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the blocking query went on waiting after the server stopped")
	}
}
