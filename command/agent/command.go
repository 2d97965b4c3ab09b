package agent

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"syscall"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/command/agent/config"
)

// Run is `drover agent`: it builds the configuration from args, starts the
// agent, prints the banner, and then serves until a signal arrives on
// signals. SIGHUP reloads the configuration files; SIGINT or SIGTERM shut
// down gracefully, and a second one while shutting down exits at once.
// It returns the process exit code.
func Run(args []string, version string, stdout, stderr io.Writer, signals <-chan os.Signal) int {
	cmdArgs, err := config.ParseArgs(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(stderr, "Error: %v\n", err)
		}
		return 1
	}
	cfg, ok := buildAndReport(cmdArgs, version, stderr)
	if !ok {
		return 1
	}

	logger := hclog.New(&hclog.LoggerOptions{
		Name:       "agent",
		Level:      hclog.LevelFromString(cfg.LogLevel),
		JSONFormat: cfg.LogJSON,
		Output:     stderr,
	})
	a, err := NewAgent(cfg, logger)
	if err != nil {
		fmt.Fprintf(stderr, "Error starting agent: %v\n", err)
		return 1
	}
	fmt.Fprint(stdout, a.Banner())

	for sig := range signals {
		if sig == syscall.SIGHUP {
			if next, ok := buildAndReport(cmdArgs, version, stderr); ok {
				if err := a.Reload(next); err != nil {
					logger.Error("reload failed", "error", err)
				}
			}
			continue
		}
		logger.Info("caught signal, shutting down", "signal", sig.String())
		return shutdownOrExit(a, signals, logger)
	}
	// The signal channel was closed: the caller wants the agent stopped.
	return shutdownOrExit(a, nil, logger)
}

// buildAndReport builds the configuration and prints its warnings and
// errors the way Nomad does.
func buildAndReport(cmdArgs *config.Args, version string, stderr io.Writer) (*config.Config, bool) {
	flags := *cmdArgs.Flags
	flags.Version = version
	args := *cmdArgs
	args.Flags = &flags
	cfg, warnings, err := config.Build(&args)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "==> WARNING: %s\n", w)
	}
	if err != nil {
		fmt.Fprintf(stderr, "==> Error loading configuration: %v\n", err)
		return nil, false
	}
	return cfg, true
}

// shutdownOrExit shuts a down; another interrupt meanwhile abandons the
// graceful shutdown.
func shutdownOrExit(a *Agent, signals <-chan os.Signal, logger hclog.Logger) int {
	done := make(chan error, 1)
	go func() { done <- a.Shutdown() }()
	for {
		select {
		case err := <-done:
			if err != nil {
				logger.Error("shutdown finished with errors", "error", err)
				return 1
			}
			return 0
		case sig, ok := <-signals:
			if !ok {
				signals = nil
				continue
			}
			if sig != syscall.SIGHUP {
				logger.Warn("second signal, exiting without waiting for shutdown", "signal", sig.String())
				return 1
			}
		}
	}
}

// Banner is the summary printed when the agent starts.
func (a *Agent) Banner() string {
	c := a.Config()
	rows := map[string]string{
		"Version":         c.Version,
		"Advertise Addrs": fmt.Sprintf("HTTP: %s; RPC: %s", a.HTTPURL(), cmp.Or(a.rpcAddr, "-")),
		"TLS":             fmt.Sprintf("HTTP: %v; RPC: %v", c.TLS.EnableHTTP, c.TLS.EnableRPC),
		"Bind Addrs":      fmt.Sprintf("HTTP: %s; RPC: %s", a.httpLn.Addr(), c.RPCBind()),
		"Region":          fmt.Sprintf("%s (DC: %s)", c.Region, c.Datacenter),
		"Server":          fmt.Sprint(c.Server.Enabled),
		"Client":          fmt.Sprint(c.Client.Enabled),
		"Log Level":       strings.ToUpper(c.LogLevel),
		"Node Name":       c.Name,
	}
	if id := a.NodeID(); id != "" {
		rows["Node Id"] = id
	}
	if c.DevMode {
		rows["Data Dir"] = a.dataDir + " (dev mode: removed on exit)"
	}
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("==> Drover agent configuration:\n\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%19s: %s\n", k, rows[k])
	}
	b.WriteString("\n==> Drover agent started! Log data will stream in below:\n\n")
	return b.String()
}
