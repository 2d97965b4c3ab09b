package nomad

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Tests of several servers run raft with test timings (a 100ms leader
// lease, see testConfig) on a machine they share with other work. Under
// -race and load a leader regularly misses its lease and steps down, and
// the cluster elects again, perhaps the same server. Nothing promises a
// test that the leader it found stays leader: a test that keeps a
// *Server as "the leader" and expects that server's leader loops to act
// fails whenever raft moves leadership, while the cluster does the right
// thing. The helpers here let such tests follow leadership instead.

// writeThroughElections sends a write through s and sends it again while
// it fails because leadership moved (an election while the machine is
// loaded), as a client would, until it succeeds or 10s pass. Only for
// writes that may be applied twice: a failure that says "leadership lost
// while committing" may have committed.
func writeThroughElections(t testing.TB, s *Server, method string, args, reply any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.RPC(method, args, reply)
		if err == nil {
			return
		}
		moved := strings.Contains(err.Error(), structs.ErrNoLeader.Error()) ||
			strings.Contains(err.Error(), structs.ErrNotLeader.Error()) // incl. "leadership lost while committing log"
		if !moved || time.Now().After(deadline) {
			t.Fatalf("%s through %s: %v", method, s.config.NodeName, err)
		}
		WaitFor(t, 10*time.Second, func() (bool, string) {
			addr, _ := s.Leader()
			return addr != "", s.config.NodeName + " knows no leader"
		})
	}
}

// waitForLeaderWhere waits until one of servers leads and cond holds for
// it, and returns it. The leader may change while it waits; cond is asked
// of whichever server leads at the time.
func waitForLeaderWhere(t testing.TB, timeout time.Duration, servers []*Server, what string, cond func(*Server) bool) *Server {
	t.Helper()
	var found *Server
	WaitFor(t, timeout, func() (bool, string) {
		for _, s := range servers {
			if s.IsLeader() && cond(s) {
				found = s
				return true, ""
			}
		}
		return false, "no leader " + what
	})
	return found
}
