package nomad

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// stallEndpoint is a test service whose calls the leader holds until the
// caller goes away or the test ends: a stand-in for a leader that froze
// with the request in hand. Calls forward as every endpoint does.
type stallEndpoint struct {
	srv     *Server
	served  atomic.Int32
	release <-chan struct{}
}

func (e *stallEndpoint) Read(args *structs.GenericReadRequest, reply *structs.GenericReadResponse) error {
	if done, err := e.srv.forward("Stall.Read", args, args, reply); done {
		return err
	}
	return e.hold(args)
}

func (e *stallEndpoint) Write(args *structs.GenericWriteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Stall.Write", args, args, reply); done {
		return err
	}
	return e.hold(args)
}

func (e *stallEndpoint) hold(info structs.RPCInfo) error {
	e.served.Add(1)
	select {
	case <-info.CallContext().Done():
	case <-e.release:
	}
	return nil
}

// A request a follower forwarded does not stay with a leader that was
// replaced: a read goes on to the new leader, and a write ends with
// ErrNotLeader (the old leader may have applied it), as soon as the
// follower's raft follows someone else. Before, both waited on the old
// leader for as long as its connection stayed open.
func TestForwardedRequestLeavesAReplacedLeader(t *testing.T) {
	t.Parallel()
	servers := startCluster(t, 3)
	leader := WaitForLeader(t, 10*time.Second, servers...)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stalls := map[*Server]*stallEndpoint{}
	for _, s := range servers {
		stalls[s] = &stallEndpoint{srv: s, release: release}
		if err := s.rpcServer.Register("Stall", stalls[s]); err != nil {
			t.Fatal(err)
		}
	}
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
			break
		}
	}

	readDone := make(chan error, 1)
	go func() {
		readDone <- follower.RPC("Stall.Read", &structs.GenericReadRequest{}, &structs.GenericReadResponse{})
	}()
	writeDone := make(chan error, 1)
	go func() {
		writeDone <- follower.RPC("Stall.Write", &structs.GenericWriteRequest{Key: "k"}, &structs.GenericResponse{})
	}()
	WaitFor(t, 10*time.Second, func() (bool, string) {
		n := stalls[leader].served.Load()
		return n == 2, "the leader holds both forwarded requests"
	})

	if err := leader.raft.LeadershipTransfer().Error(); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	next := waitForLeaderWhere(t, 10*time.Second, servers, "a new leader", func(s *Server) bool { return s != leader })

	select {
	case err := <-writeDone:
		if !errors.Is(err, structs.ErrNotLeader) {
			t.Fatalf("the forwarded write ended with %v, want ErrNotLeader", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the forwarded write still waits on the replaced leader")
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		return stalls[next].served.Load() == 1, "the new leader serves the read"
	})
	select {
	case err := <-readDone:
		t.Fatalf("the read ended (%v) instead of going on to the new leader", err)
	default:
	}
	if n := stalls[leader].served.Load(); n != 2 {
		t.Fatalf("the old leader served %d calls, want the first two only", n)
	}
}
