package nomad

import (
	"os"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// TestConfig returns a server configuration for tests: loopback on a free
// port, raft timings short enough that elections take well under a second,
// and logs only on failure-level noise.
func TestConfig(t testing.TB) *Config {
	cfg := DefaultConfig()
	cfg.NodeName = t.Name()
	cfg.RPCAddr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.NumSchedulers = 1
	cfg.RetryJoinInterval = 100 * time.Millisecond
	cfg.FailoverHeartbeatTTL = 30 * time.Second
	cfg.Logger = hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: testLogLevel()})
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout = 200 * time.Millisecond
	rc.ElectionTimeout = 200 * time.Millisecond
	rc.LeaderLeaseTimeout = 100 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	cfg.RaftConfig = rc
	return cfg
}

// TestServer starts a server for a test and shuts it down when the test
// ends. cb may change the configuration first.
func TestServer(t testing.TB, cb func(*Config)) *Server {
	t.Helper()
	return testServerWith(t, cb, serverOptions{})
}

// testServerWith is TestServer with some of the server's parts replaced
// by twins.
func testServerWith(t testing.TB, cb func(*Config), opts serverOptions) *Server {
	t.Helper()
	cfg := TestConfig(t)
	if cb != nil {
		cb(cfg)
	}
	s, err := newServer(cfg, opts)
	if err != nil {
		t.Fatalf("starting test server: %v", err)
	}
	t.Cleanup(func() { s.Shutdown() })
	return s
}

// WaitForLeader waits until one of servers leads and every one of them
// knows it, and returns the leader.
func WaitForLeader(t testing.TB, timeout time.Duration, servers ...*Server) *Server {
	t.Helper()
	var leader *Server
	agreed := func() bool {
		leader = nil
		for _, s := range servers {
			if s.IsLeader() {
				leader = s
			}
		}
		if leader == nil {
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
		return nil
	}
	return leader
}

// WaitFor polls cond until it holds or timeout passes, then fails the test
// with the last reason cond gave. It is wait.For, kept under this name
// because the server's tests call it everywhere.
func WaitFor(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	wait.For(t, timeout, cond)
}

// testLogLevel is warn unless DROVER_TEST_LOG names another level, so a
// flaky test can be rerun with the whole story in its log.
func testLogLevel() hclog.Level {
	if l := hclog.LevelFromString(os.Getenv("DROVER_TEST_LOG")); l != hclog.NoLevel {
		return l
	}
	return hclog.Warn
}
