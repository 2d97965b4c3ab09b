package config

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Args is what `drover agent` was asked on its command line: the
// config paths to load, whether to start from the dev defaults, and the
// flag overrides, which win over every file.
type Args struct {
	Dev         bool
	ConfigPaths []string
	Flags       *Config
}

// ParseArgs parses `drover agent` flags. Flag names follow Nomad's.
func ParseArgs(args []string, errOut io.Writer) (*Args, error) {
	c := &Config{}
	out := &Args{Flags: c}
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(errOut)
	fs.Usage = func() { fmt.Fprint(errOut, agentUsage) }

	fs.BoolVar(&out.Dev, "dev", false, "")
	fs.Var((*listFlag)(&out.ConfigPaths), "config", "")
	fs.BoolVar(&c.Server.Enabled, "server", false, "")
	fs.BoolVar(&c.Client.Enabled, "client", false, "")
	fs.StringVar(&c.DataDir, "data-dir", "", "")
	fs.StringVar(&c.BindAddr, "bind", "", "")
	fs.StringVar(&c.Name, "node", "", "")
	fs.StringVar(&c.Datacenter, "dc", "", "")
	fs.StringVar(&c.Region, "region", "", "")
	fs.StringVar(&c.LogLevel, "log-level", "", "")
	fs.BoolVar(&c.LogJSON, "log-json", false, "")
	fs.IntVar(&c.Server.BootstrapExpect, "bootstrap-expect", 0, "")
	fs.Var((*listFlag)(&c.Server.ServerJoin.RetryJoin), "retry-join", "")
	fs.DurationVar(&c.Server.ServerJoin.RetryInterval, "retry-interval", 0, "")
	fs.IntVar(&c.Server.ServerJoin.RetryMax, "retry-max", 0, "")
	fs.Var((*commaFlag)(&c.Client.Servers), "servers", "")
	fs.StringVar(&c.Client.NetworkInterface, "network-interface", "", "")
	fs.StringVar(&c.Client.NodeClass, "node-class", "", "")
	fs.StringVar(&c.Client.NodePool, "node-pool", "", "")
	fs.Var((*metaFlag)(&c.Client.Meta), "meta", "")
	fs.BoolVar(&c.ACL.Enabled, "acl-enabled", false, "")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("agent: unexpected argument %q (flags start with '-')", fs.Arg(0))
	}
	if c.LogLevel != "" && !validLogLevel(c.LogLevel) {
		return nil, fmt.Errorf("agent: -log-level %q must be one of trace, debug, info, warn, error, off", c.LogLevel)
	}
	// -retry-join is Nomad's flag for both roles: a client joins through
	// the same addresses.
	c.Client.ServerJoin.RetryJoin = append([]string(nil), c.Server.ServerJoin.RetryJoin...)
	return out, nil
}

const agentUsage = `Usage: drover agent [options]

  Starts a Drover agent: a server, a client, or both.

Options:
  -dev                   Server and client in one process, in-memory raft, data in
                         a temp dir, raw_exec and mock drivers, HTTP on 127.0.0.1:4646.
  -config=<path>         HCL or JSON agent config file or directory; repeatable,
                         later files win. Nomad agent config syntax.
  -server                Enable the server.
  -client                Enable the client.
  -data-dir=<path>       Where state is kept.
  -bind=<addr>           Address to bind listeners to (default 0.0.0.0).
  -bootstrap-expect=<n>  Servers to wait for before bootstrapping raft.
  -retry-join=<addr>     Server RPC address to join; repeatable.
  -servers=<a,b>         Server RPC addresses for the client.
  -node=<name>           Node name (default: hostname).
  -dc=<name>             Datacenter (default dc1).
  -region=<name>         Region (default global).
  -node-class=<class>    Client node class.
  -node-pool=<pool>      Client node pool.
  -meta=<key=value>      Client metadata; repeatable.
  -network-interface=<n> Interface whose address the client advertises.
  -log-level=<level>     trace, debug, info, warn, error (default info).
  -log-json              Log as JSON.
  -acl-enabled           Enforce ACL tokens (the acl { enabled = true } block).
`

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// commaFlag is a comma-separated list; repeating it appends.
type commaFlag []string

func (l *commaFlag) String() string { return strings.Join(*l, ",") }
func (l *commaFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// metaFlag collects key=value pairs.
type metaFlag map[string]string

func (m *metaFlag) String() string { return "" }
func (m *metaFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("expected key=value, got %q", v)
	}
	if *m == nil {
		*m = map[string]string{}
	}
	(*m)[k] = val
	return nil
}

func validLogLevel(s string) bool {
	switch strings.ToUpper(s) {
	case "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF":
		return true
	}
	return false
}

// Build turns command-line arguments into the agent's configuration:
// defaults (or dev defaults), then each -config path in order, then flags.
func Build(args *Args) (*Config, []string, error) {
	base := Default()
	if args.Dev {
		base = Dev()
	}
	files, warnings, err := loadPaths(args.ConfigPaths)
	if err != nil {
		return nil, warnings, err
	}
	c := base.Merge(files).Merge(args.Flags)
	if err := c.Validate(); err != nil {
		return nil, warnings, err
	}
	return c, warnings, nil
}
