// Package testclient starts real in-process clients for the tests of other
// packages (the server's, the node simulator's). The client package's own
// tests cannot import it (it imports client) and start theirs the same way
// from a _test.go file; both take their configuration from
// clienttest.Config. Only tests import it: the drover binary carries no test
// code (binary_deps_test.go at the module root).
package testclient

import (
	"testing"

	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/client/clienttest"
	"github.com/drover-sched/drover/client/config"
)

// New starts a client for a test: a fresh data dir, raw_exec (enabled) and
// mock drivers, loopback networking, a test logger, and short intervals.
// cb may change the config before the start; without Servers or RPC it
// talks to a new clienttest.FakeServer. The client is shut down when the
// test ends.
func New(t testing.TB, cb func(*config.Config)) *client.Client {
	t.Helper()
	c, err := client.NewClient(clienttest.Config(t, cb))
	if err != nil {
		t.Fatalf("start test client: %v", err)
	}
	t.Cleanup(c.Shutdown)
	return c
}
