// Package testserver has what the server's own tests (package nomad) and
// the tests of other packages (through nomad/nomadtest) share of a test
// server: its raft timings, its log level and the wait for an agreed
// leader. It does not import nomad, so package nomad's tests can import it;
// only tests do, and the drover binary carries none of it
// (binary_deps_test.go at the module root).
package testserver

import (
	"os"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/testutil/wait"
)

// NumSchedulers and RetryJoinInterval keep a test server small and let
// servers of one test find each other at once.
const (
	NumSchedulers     = 1
	RetryJoinInterval = 100 * time.Millisecond
)

// RaftConfig returns raft timings short enough that elections take well
// under a second.
func RaftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout = 200 * time.Millisecond
	rc.ElectionTimeout = 200 * time.Millisecond
	rc.LeaderLeaseTimeout = 100 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	return rc
}

// Logger returns the logger of a test server named for t: warn unless
// DROVER_TEST_LOG names another level, so a flaky test can be rerun with
// the whole story in its log.
func Logger(t testing.TB) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: logLevel()})
}

func logLevel() hclog.Level {
	if l := hclog.LevelFromString(os.Getenv("DROVER_TEST_LOG")); l != hclog.NoLevel {
		return l
	}
	return hclog.Warn
}

// Server is what WaitForLeader needs of a server.
type Server interface {
	IsLeader() bool
	// Leader returns the leader's RPC address (and its ID).
	Leader() (string, string)
	RPCAddr() string
}

// WaitForLeader waits until one of servers leads and every one of them
// knows it, and returns the leader.
func WaitForLeader[S Server](t testing.TB, timeout time.Duration, servers ...S) S {
	t.Helper()
	var leader S
	agreed := func() bool {
		found := false
		for _, s := range servers {
			if s.IsLeader() {
				leader, found = s, true
			}
		}
		if !found {
			return false
		}
		for _, s := range servers {
			if addr, _ := s.Leader(); addr != leader.RPCAddr() {
				return false
			}
		}
		return true
	}
	if !wait.Holds(timeout, agreed) {
		t.Fatalf("no agreed leader among %d servers after %s", len(servers), timeout)
		var none S
		return none
	}
	return leader
}
