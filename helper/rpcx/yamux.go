package rpcx

import (
	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"
)

// yamuxConfig is the session configuration for both ends. yamux's defaults
// are kept (keepalives every 30s, so a vanished peer is noticed; a 10s write
// timeout on the underlying connection), but its logging goes to hclog
// instead of stderr.
func yamuxConfig(logger hclog.Logger) *yamux.Config {
	cfg := yamux.DefaultConfig()
	cfg.LogOutput = nil
	cfg.Logger = logger.StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})
	return cfg
}
