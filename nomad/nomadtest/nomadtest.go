// Package nomadtest starts real in-process servers for the tests of other
// packages (the client's, the node simulator's, the agent's, the cluster
// benchmarks): the same servers package nomad's own tests start, with the
// same timings and logger (nomad/internal/testserver). Only tests import
// it: the drover binary carries no test code (binary_deps_test.go at the
// module root).
package nomadtest

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/internal/testserver"
)

// Config returns a server configuration for tests: loopback on a free
// port, raft timings short enough that elections take well under a second,
// and logs only on failure-level noise.
func Config(t testing.TB) *nomad.Config {
	cfg := nomad.DefaultConfig()
	cfg.NodeName = t.Name()
	cfg.RPCAddr = "127.0.0.1:0"
	cfg.DataDir = t.TempDir()
	cfg.FailoverHeartbeatTTL = 30 * time.Second
	cfg.Logger = testserver.Logger(t)
	Fast(cfg)
	return cfg
}

// Fast gives cfg a test server's timings and size: one scheduler, quick
// joins, and elections well under a second. An agent's tests apply it
// through the agent's server hook.
func Fast(cfg *nomad.Config) {
	cfg.NumSchedulers = testserver.NumSchedulers
	cfg.RetryJoinInterval = testserver.RetryJoinInterval
	cfg.RaftConfig = testserver.RaftConfig()
}

// Server starts a server for a test and shuts it down when the test ends.
// cb may change the configuration first.
func Server(t testing.TB, cb func(*nomad.Config)) *nomad.Server {
	t.Helper()
	cfg := Config(t)
	if cb != nil {
		cb(cfg)
	}
	s, err := nomad.NewServer(cfg)
	if err != nil {
		t.Fatalf("starting test server: %v", err)
	}
	t.Cleanup(func() { s.Shutdown() })
	return s
}

// WaitForLeader waits until one of servers leads and every one of them
// knows it, and returns the leader.
func WaitForLeader(t testing.TB, timeout time.Duration, servers ...*nomad.Server) *nomad.Server {
	t.Helper()
	return testserver.WaitForLeader(t, timeout, servers...)
}
