package clienttest

import (
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/drivers/rawexec"
)

// Config returns a client configuration for a test: a fresh data dir,
// raw_exec (enabled) and mock drivers, loopback networking, a test logger,
// and short intervals. cb may change it; without Servers or RPC after cb,
// the client talks to a new FakeServer.
//
// The client's own tests start a client from it in a _test.go file, and
// other packages' tests with client/testclient.
func Config(t testing.TB, cb func(*config.Config)) *config.Config {
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
		cfg.RPC = NewFakeServer(0)
	}
	return cfg
}
