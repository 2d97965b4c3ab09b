package client

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/clienttest"
	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/drivers/rawexec"
)

// TestClient starts a client for a test: a fresh data dir, raw_exec
// (enabled) and mock drivers, loopback networking, a test logger, and short
// intervals. cb may change the config before the start; without Servers or
// RPC it talks to a new clienttest.FakeServer (see TestConfigRPC). The
// client is shut down when the test ends.
func TestClient(t testing.TB, cb func(*config.Config)) *Client {
	t.Helper()
	cfg := &config.Config{
		DataDir:        t.TempDir(),
		NodeName:       "test-" + t.Name(),
		EnabledDrivers: []string{"raw_exec", "mock"},
		Options:        map[string]string{rawexec.EnableOption: "true"},
		LoopbackOnly:   true,
		UpdateInterval: 50 * time.Millisecond,
		MaxBackoff:     time.Second,
		Logger: hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Error,
			Output: hclog.DefaultOutput}),
	}
	if cb != nil {
		cb(cfg)
	}
	if cfg.RPC == nil && len(cfg.Servers) == 0 {
		cfg.RPC = clienttest.NewFakeServer(0)
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatalf("start test client: %v", err)
	}
	t.Cleanup(c.Shutdown)
	return c
}

// TestConfigRPC returns the RPCer a client was started with, for tests
// that let TestClient create the fake server.
func (c *Client) TestConfigRPC() config.RPCer { return c.cfg.RPC }
