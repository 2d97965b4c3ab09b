package command

import (
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/client/nodesim"
	"github.com/drover-sched/drover/helper/tlsutil"
	"github.com/drover-sched/drover/structs"
)

const nodesimHelp = `
Usage: drover nodesim [options]

  Simulate many client nodes in this process against real servers, for
  benchmarks and load tests. Each node registers with its own ID and
  secret, heartbeats at the TTL the servers give, watches its allocations
  and reports their status as a real client does. Tasks must use the mock
  driver (mock_driver): run_for, exit_code, start_error and kill_after are
  honoured without starting any process.

  Runs until interrupted, or for -duration. SIGUSR1 applies the -fault-*
  outage at once; SIGUSR2 ends it at once (the nodes that are to come
  back do).

Nodesim Options:

  -servers=<addr,...>   Servers' RPC addresses (default 127.0.0.1:4647).
  -count=<n>            Nodes to simulate (default 100).
  -datacenters=<a,b>    Datacenters, assigned round robin (default dc1).
  -node-pool=<pool>     Node pool of every node (default "default").
  -node-class=<class>   Node class of every node.
  -meta=<key=value>     Node meta; repeatable. In the value, {i} is the
                        node's index and {i%N}, {i/N} its remainder and
                        quotient: -meta 'rack=r{i%50}'.
  -cpu=<MHz> -memory=<MB> -disk=<MB>
                        Resources of each node (4000, 8192, 102400).
  -name-prefix=<p>      Nodes are named <p>-<i> (default sim).
  -seed=<n>             Seed for IDs, secrets and jitter (default: time).
  -nodes-per-shard=<n>  Nodes sharing one connection pool (default 200).
  -ca-cert, -client-cert, -client-key
                        TLS: the cluster's CA and a client certificate, as
                        the agent's tls.ca_file, cert_file and key_file.
  -verify-server-hostname
                        Require server.<region>.nomad certificates.
  -fault-stop-heartbeat=<fraction>
                        Fraction of nodes cut off from the servers (no
                        heartbeat, no call at all) after -fault-after.
  -fault-for=<duration> How long the outage lasts (default 30s).
  -fault-return=<fraction>
                        Fraction of the cut-off nodes that come back.
  -fault-after=<duration>
                        When the outage starts (default 0: only on SIGUSR1).
  -duration=<d>         Stop after this long (default: until interrupted).
  -stats-interval=<d>   Print counters this often (default 10s).
  -stats-file=<path>    Also write them as JSON to this file.
`

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// nodesimStats is one line of -stats-file.
type nodesimStats struct {
	Time      time.Time
	Elapsed   time.Duration
	HeapAlloc uint64
	// HeapLive is the heap the last GC found live: what the simulated
	// nodes really hold, without the garbage HeapAlloc also counts.
	HeapLive   uint64
	Goroutines int
	nodesim.Snapshot
}

func nodesimCmd(m *Meta, args []string) int {
	c := m.cmdLine("nodesim", nodesimHelp, noArgs)
	var meta multiFlag
	servers := c.String("servers", "127.0.0.1:4647", "")
	count := c.Int("count", 100, "")
	dcs := c.String("datacenters", "dc1", "")
	pool := c.String("node-pool", "", "")
	class := c.String("node-class", "", "")
	c.Var(&meta, "meta", "")
	cpu := c.Int64("cpu", 0, "")
	mem := c.Int64("memory", 0, "")
	disk := c.Int64("disk", 0, "")
	prefix := c.String("name-prefix", "", "")
	seed := c.Int64("seed", 0, "")
	perShard := c.Int("nodes-per-shard", 0, "")
	verifyHost := c.Bool("verify-server-hostname", false, "")
	stopFrac := c.Float64("fault-stop-heartbeat", 0, "")
	faultFor := c.Duration("fault-for", 30*time.Second, "")
	returnFrac := c.Float64("fault-return", 0, "")
	faultAfter := c.Duration("fault-after", 0, "")
	duration := c.Duration("duration", 0, "")
	interval := c.Duration("stats-interval", 10*time.Second, "")
	statsFile := c.String("stats-file", "", "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if *interval <= 0 {
		return c.usageError(fmt.Sprintf("-stats-interval: expected a positive duration, got %s", *interval))
	}
	cfg := nodesim.Config{Count: *count, Servers: structs.SplitList(*servers), Datacenters: structs.SplitList(*dcs), NodePool: *pool,
		NodeClass: *class, CPU: *cpu, MemoryMB: *mem, DiskMB: *disk, NamePrefix: *prefix, NodesPerShard: *perShard,
		Region: m.region, Seed: *seed, Meta: map[string]string{},
		Fault:  nodesim.Fault{StopFraction: *stopFrac, For: *faultFor, ReturnFraction: *returnFrac, After: *faultAfter},
		Logger: hclog.New(&hclog.LoggerOptions{Name: "nodesim", Level: hclog.Error, Output: m.stderr})}
	if !c.flagWasSet("seed") {
		cfg.Seed = time.Now().UnixNano()
	}
	for _, kv := range meta {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return c.usageError(fmt.Sprintf("-meta %q: expected key=value, such as rack=r{i%%50}", kv))
		}
		cfg.Meta[k] = v
	}
	if m.caCert != "" || m.clientCert != "" || m.clientKey != "" {
		region := cfg.Region
		if region == "" {
			region = "global"
		}
		mgr, err := tlsutil.New(tlsutil.Config{EnableRPC: true, CAFile: m.caCert, CertFile: m.clientCert, KeyFile: m.clientKey,
			VerifyServerHostname: *verifyHost}, region, nil)
		if err != nil {
			return m.errorf("Error loading TLS material (-ca-cert, -client-cert, -client-key): %v", err)
		}
		cfg.TLS = mgr.OutgoingRPC()
	}
	sim, err := nodesim.New(cfg)
	if err != nil {
		return c.usageError(err.Error())
	}

	signals := make(chan os.Signal, 4)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(signals)
	start := time.Now()
	sim.Start()
	defer sim.Stop()
	m.out("nodesim: started %d nodes against %s", *count, strings.Join(cfg.Servers, ","))

	var end <-chan time.Time
	if *duration > 0 {
		end = time.After(*duration)
	}
	var fault <-chan time.Time
	if cfg.Fault.Enabled() && cfg.Fault.After > 0 {
		fault = time.After(cfg.Fault.After)
	}
	ticker := time.NewTicker(*interval)
	defer ticker.Stop()
	report := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		st := nodesimStats{Time: time.Now(), Elapsed: time.Since(start), HeapAlloc: ms.HeapAlloc, Goroutines: runtime.NumGoroutine(), Snapshot: sim.Stats()}
		if live[0].Value.Kind() == metrics.KindUint64 {
			st.HeapLive = live[0].Value.Uint64()
		}
		m.out("nodesim: %s registered=%d/%d heartbeats=%d hb_failures=%d running=%d complete=%d failed=%d updates=%d live heap=%dMiB (%d B/node) goroutines=%d",
			st.Elapsed.Round(time.Second), st.Registered, st.Nodes, st.Heartbeats, st.HeartbeatFailures, st.AllocsRunning,
			st.AllocsComplete, st.AllocsFailed, st.UpdateCalls, st.HeapLive>>20, st.HeapLive/uint64(max(st.Nodes, 1)), st.Goroutines)
		if *statsFile != "" {
			if err := writeJSONAtomic(*statsFile, st); err != nil {
				m.errorf("nodesim: writing -stats-file: %v", err)
			}
		}
	}
	injectFault := func() {
		stopped, back := sim.InjectFault()
		m.out("nodesim: cut %d nodes off for %s; %d will come back", len(stopped), cfg.Fault.For, len(back))
	}
	for {
		select {
		case <-ticker.C:
			report()
		case <-fault:
			injectFault()
		case sig := <-signals:
			if sig == syscall.SIGUSR2 {
				m.out("nodesim: outage ended: %d nodes back", sim.EndFault())
				continue
			}
			if sig == syscall.SIGUSR1 {
				if !cfg.Fault.Enabled() {
					m.errorf("nodesim: SIGUSR1 ignored: no -fault-stop-heartbeat fraction set")
					continue
				}
				injectFault()
				continue
			}
			report()
			return 0
		case <-end:
			report()
			return 0
		}
	}
}

// writeJSONAtomic replaces path with v as JSON, so a reader never sees a
// half-written file.
func writeJSONAtomic(path string, v any) error {
	buf, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".nodesim-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(buf); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
