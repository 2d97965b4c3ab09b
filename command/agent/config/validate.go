package config

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/drover-sched/drover/client/drivers/docker"
)

// Validate checks what only the merged configuration can tell: that the
// agent has something to do and the pieces fit together.
func (c *Config) Validate() error {
	var errs []error
	if !c.Server.Enabled && !c.Client.Enabled {
		errs = append(errs, errors.New("agent: neither server nor client is enabled (use -dev, -server, -client, or server/client blocks)"))
	}
	if !c.DevMode && c.DataDir == "" {
		errs = append(errs, errors.New("agent: data_dir is required unless running with -dev"))
	}
	if c.DataDir != "" && !filepath.IsAbs(c.DataDir) {
		if _, err := filepath.Abs(c.DataDir); err != nil {
			errs = append(errs, fmt.Errorf("agent: data_dir %q: %v", c.DataDir, err))
		}
	}
	if c.Client.Enabled && !c.Server.Enabled && len(c.Client.Servers) == 0 && len(c.Client.ServerJoin.RetryJoin) == 0 {
		errs = append(errs, errors.New("agent: client has no servers (set client.servers, client.server_join.retry_join or -servers)"))
	}
	if c.Server.Enabled && c.DevMode && c.Server.BootstrapExpect > 1 {
		errs = append(errs, errors.New("agent: bootstrap_expect > 1 is not possible with -dev (dev mode is one server)"))
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"ports.http", c.Ports.HTTP}, {"ports.rpc", c.Ports.RPC}} {
		if p.v < 0 || p.v > 65535 {
			errs = append(errs, fmt.Errorf("agent: %s %d is not a valid port", p.name, p.v))
		}
	}
	if err := c.TLS.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("agent: %w", err))
	}
	if !validLogLevel(c.LogLevel) {
		errs = append(errs, fmt.Errorf("agent: log_level %q must be one of trace, debug, info, warn, error, off", c.LogLevel))
	}
	errs = append(errs, c.Limits.validate()...)
	errs = append(errs, c.Client.Artifact.validate()...)
	if p, ok := c.Plugins["docker"]; ok {
		if _, err := docker.ParsePluginConfig(p.Config); err != nil {
			errs = append(errs, fmt.Errorf("agent: %w", err))
		}
	}
	if err := c.Telemetry.WithDefaults().Validate(); err != nil {
		errs = append(errs, fmt.Errorf("agent: %w", err))
	}
	return errors.Join(errs...)
}
