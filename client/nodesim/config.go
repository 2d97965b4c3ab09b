package nodesim

import (
	"crypto/tls"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults, the real client's where it has them.
const (
	DefaultNodesPerShard     = 200
	DefaultUpdateInterval    = 200 * time.Millisecond
	DefaultBlockingQueryWait = 5 * time.Minute
	DefaultMaxBackoff        = 30 * time.Second
	DefaultConcurrency       = 64
	backoffBase              = time.Second
	callTimeout              = 30 * time.Second
)

// Config says what to simulate.
type Config struct {
	// Count is how many nodes to simulate.
	Count int
	// Servers are the servers' RPC addresses (host:port).
	Servers []string
	// Region is the region in every request; "global" when empty.
	Region string
	// Datacenters are assigned round robin: node i is in
	// Datacenters[i%len]. Default "dc1".
	Datacenters []string
	// NodePool and NodeClass of every node ("default" pool when empty).
	NodePool  string
	NodeClass string
	// Meta are templates: in a value, {i} is the node's index, {i%N} and
	// {i/N} its remainder and quotient by N (rack=r{i%50}).
	Meta map[string]string
	// CPU (MHz), MemoryMB and DiskMB each node offers.
	CPU      int64
	MemoryMB int64
	DiskMB   int64
	// NamePrefix names the nodes: <prefix>-<i>. Default "sim".
	NamePrefix string
	// Seed makes node IDs, secrets and jitter repeatable.
	Seed int64
	// TLS, when set, is the client-side TLS config of every connection
	// (a client certificate of the cluster's CA).
	TLS *tls.Config
	// NodesPerShard is how many nodes share one connection pool and
	// source address. Default DefaultNodesPerShard.
	NodesPerShard int
	// Concurrency bounds the calls in flight other than blocking
	// queries (registrations, heartbeats, reports, fetches).
	Concurrency int
	// UpdateInterval, BlockingQueryWait and MaxBackoff as the real client's.
	UpdateInterval    time.Duration
	BlockingQueryWait time.Duration
	MaxBackoff        time.Duration
	// Fault, when set, is applied by Sim.InjectFault (the command does it
	// after Fault.After, or on SIGUSR1).
	Fault Fault
	// Logger receives the simulator's logs. Nil discards them.
	Logger hclog.Logger
}

// Fault is a heartbeat outage: a fraction of the nodes cut off from the
// servers (no call at all: heartbeats, blocking query and reports stop)
// for For; a fraction of those come back afterwards, the rest stay away.
type Fault struct {
	StopFraction   float64
	For            time.Duration
	ReturnFraction float64
	After          time.Duration
}

// Enabled reports whether the fault does anything.
func (f Fault) Enabled() bool { return f.StopFraction > 0 }

func (c *Config) setDefaults() {
	if c.Region == "" {
		c.Region = "global"
	}
	if len(c.Datacenters) == 0 {
		c.Datacenters = []string{"dc1"}
	}
	if c.NodePool == "" {
		c.NodePool = "default"
	}
	if c.NamePrefix == "" {
		c.NamePrefix = "sim"
	}
	if c.CPU == 0 {
		c.CPU = 4000
	}
	if c.MemoryMB == 0 {
		c.MemoryMB = 8192
	}
	if c.DiskMB == 0 {
		c.DiskMB = 100 * 1024
	}
	if c.NodesPerShard <= 0 {
		c.NodesPerShard = DefaultNodesPerShard
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.UpdateInterval <= 0 {
		c.UpdateInterval = DefaultUpdateInterval
	}
	if c.BlockingQueryWait <= 0 {
		c.BlockingQueryWait = DefaultBlockingQueryWait
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
}

// validate names each field that is wrong and what would be right.
func (c *Config) validate() error {
	var errs []error
	if c.Count < 1 || c.Count > 1_000_000 {
		errs = append(errs, fmt.Errorf("count: expected between 1 and 1000000 nodes, got %d", c.Count))
	}
	if len(c.Servers) == 0 {
		errs = append(errs, errors.New("servers: at least one server RPC address (host:port) is required"))
	}
	for _, dc := range c.Datacenters {
		if strings.TrimSpace(dc) == "" {
			errs = append(errs, errors.New("datacenters: a datacenter name is empty"))
		}
	}
	if c.CPU < 0 || c.MemoryMB < 0 || c.DiskMB < 0 {
		errs = append(errs, fmt.Errorf("resources: cpu, memory and disk must not be negative, got %d MHz, %d MB, %d MB", c.CPU, c.MemoryMB, c.DiskMB))
	}
	if f := c.Fault; f.StopFraction < 0 || f.StopFraction > 1 || f.ReturnFraction < 0 || f.ReturnFraction > 1 {
		errs = append(errs, fmt.Errorf("fault: fractions must be between 0 and 1, got stop %g and return %g", f.StopFraction, f.ReturnFraction))
	}
	if c.Fault.Enabled() && c.Fault.For <= 0 {
		errs = append(errs, fmt.Errorf("fault-for: a stop fraction needs a positive outage duration, got %s", c.Fault.For))
	}
	for k, v := range c.Meta {
		if k == "" {
			errs = append(errs, errors.New("meta: a key is empty; write key=value"))
		}
		if _, err := expandMeta(v, 0); err != nil {
			errs = append(errs, fmt.Errorf("meta %q: %w", k, err))
		}
	}
	return errors.Join(errs...)
}

var metaExpr = regexp.MustCompile(`\{([^}]*)\}`)
var metaTerm = regexp.MustCompile(`^i(?:\s*([%/])\s*([0-9]+))?$`)

// expandMeta fills a meta template for node i.
func expandMeta(tmpl string, i int) (string, error) {
	var err error
	out := metaExpr.ReplaceAllStringFunc(tmpl, func(m string) string {
		inner := strings.TrimSpace(m[1 : len(m)-1])
		parts := metaTerm.FindStringSubmatch(inner)
		if parts == nil {
			err = fmt.Errorf("template {%s}: expected {i}, {i%%N} or {i/N}", inner)
			return m
		}
		if parts[1] == "" {
			return strconv.Itoa(i)
		}
		n, convErr := strconv.Atoi(parts[2])
		if convErr != nil || n == 0 {
			err = fmt.Errorf("template {%s}: N must be a positive whole number", inner)
			return m
		}
		if parts[1] == "%" {
			return strconv.Itoa(i % n)
		}
		return strconv.Itoa(i / n)
	})
	return out, err
}
