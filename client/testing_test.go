package client

import (
	"testing"

	"github.com/drover-sched/drover/client/clienttest"
	"github.com/drover-sched/drover/client/config"
)

// testClient starts a client for a test with clienttest.Config's test
// configuration (cb may change it; without Servers or RPC the client talks
// to a new clienttest.FakeServer) and shuts it down when the test ends.
// Tests of other packages use client/testclient.
func testClient(t testing.TB, cb func(*config.Config)) *Client {
	t.Helper()
	c, err := NewClient(clienttest.Config(t, cb))
	if err != nil {
		t.Fatalf("start test client: %v", err)
	}
	t.Cleanup(c.Shutdown)
	return c
}
