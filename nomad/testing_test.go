package nomad

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad/internal/testserver"
)

// The server's own tests start servers with these helpers; tests of other
// packages use nomad/nomadtest, which builds its servers the same way
// (both take their timings, logger and leader wait from
// nomad/internal/testserver).

// testConfig returns a server configuration for tests: loopback on a free
// port, raft timings short enough that elections take well under a second,
// and logs only on failure-level noise.
func testConfig(t testing.TB) *Config {
	cfg := DefaultConfig()
	cfg.NodeName = t.Name()
	cfg.RPCAddr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.NumSchedulers = testserver.NumSchedulers
	cfg.RetryJoinInterval = testserver.RetryJoinInterval
	cfg.FailoverHeartbeatTTL = 30 * time.Second
	cfg.Logger = testserver.Logger(t)
	cfg.RaftConfig = testserver.RaftConfig()
	return cfg
}

// testServer starts a server for a test and shuts it down when the test
// ends. cb may change the configuration first.
func testServer(t testing.TB, cb func(*Config)) *Server {
	t.Helper()
	return testServerWith(t, cb, serverOptions{})
}

// testServerWith is testServer with some of the server's parts replaced
// by twins.
func testServerWith(t testing.TB, cb func(*Config), opts serverOptions) *Server {
	t.Helper()
	cfg := testConfig(t)
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
	return testserver.WaitForLeader(t, timeout, servers...)
}

// WaitFor polls cond until it holds or timeout passes, then fails the test
// with the last reason cond gave. It is wait.For, kept under this name
// because the server's tests call it everywhere.
func WaitFor(t testing.TB, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	wait.For(t, timeout, cond)
}
