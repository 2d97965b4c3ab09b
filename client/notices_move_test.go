package client

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad/nomadtest"
)

// A client registers for alloc notices again where its calls go once they
// move to another server. The server it left (here: demoted as a call
// failing with "no leader" would demote it) keeps its session open, and,
// cut off from the leader, would never push a notice: without registering
// again the client would learn of its allocs only at its lease, five
// minutes on.
func TestClientRegistersForNoticesAgainWhenItsCallsMoveToAnotherServer(t *testing.T) {
	s := nomadtest.Server(t, nil)
	nomadtest.WaitForLeader(t, 10*time.Second, s)
	// One server under two addresses: a session for each, as for two
	// servers.
	_, port, err := net.SplitHostPort(s.RPCAddr())
	if err != nil {
		t.Fatal(err)
	}
	first, second := net.JoinHostPort("localhost", port), net.JoinHostPort("127.0.0.1", port)
	c := testClient(t, func(cfg *config.Config) {
		cfg.Servers = []string{first, second}
		cfg.BlockingQueryWait = 5 * time.Minute // the lease: far past the wait below
	})
	wait.Until(t, 20*time.Second, "the client to register for alloc notices", func() bool {
		return s.AllocNoticeRegistered(c.NodeID())
	})
	if got := c.srv.Servers()[0]; got != first {
		t.Fatalf("calls go to %s, want %s", got, first)
	}
	before := s.AllocNoticeRegistrations()
	c.srv.Demote(first)
	wait.Until(t, 20*time.Second, "the client to register again after its calls moved (registrations "+strconv.FormatUint(before, 10)+" before)", func() bool {
		return s.AllocNoticeRegistrations() > before
	})
}
