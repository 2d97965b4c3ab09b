//go:build benchcluster

package cluster

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/nomadtest"
	"github.com/drover-sched/drover/structs"
)

var (
	flagDrover   = flag.String("drover", "", "path of the drover binary that runs nodesim (required)")
	flagNodes    = flag.String("nodes", "5000,10000", "simulated node counts, comma separated")
	flagServers  = flag.String("servers", "1,3", "server counts, comma separated")
	flagAllocs   = flag.Int("allocs", 20000, "allocs to place: half binpacked, half spread over the racks")
	flagRacks    = flag.Int("racks", 50, "racks (meta.rack values) to spread over")
	flagStorm    = flag.Int("storm", 1000, "nodes cut off in the disconnect storm")
	flagHBRate   = flag.Float64("max-heartbeats-per-second", 500, "the servers' max_heartbeats_per_second")
	flagJSON     = flag.String("json", "", "write the results as JSON to this file")
	flagHeapProf = flag.String("heap-profile", "", "write the servers' heap profiles with nodes ready and after placement to <path>-<servers>-<nodes>-{nodes,allocs}.pprof")
	flagTimeout  = flag.Duration("phase-timeout", 10*time.Minute, "give up on a phase after this long")
	// For finding out why leadership moves during the storm.
	flagServerLog = flag.String("server-log", "", "write the servers' warnings (raft's included) to <path>-<servers>-<nodes>.log")
	flagStormCPU  = flag.String("storm-cpu-profile", "", "write a CPU profile of the servers' process while the storm's nodes are cut off to <path>-<servers>-<nodes>.pprof")
	flagRaftMult  = flag.Int("raft-multiplier", 1, "the servers' raft_multiplier (1-10): raft's leadership timeouts ×N, for a machine too busy for raft's defaults")
	flagSimNice   = flag.Int("nodesim-nice", 0, "run nodesim at this nice level (0: as the benchmark), to tell the servers' own cost from starvation")
)

const jobSize = 1000 // allocs per job

// Result is one variant's figures. Durations are in seconds, latencies in
// milliseconds, sizes in bytes.
type Result struct {
	Servers          int
	Nodes            int
	LoadAvgBefore    string
	LoadAvgAfter     string
	NodesReadySec    float64
	HeartbeatTTLSec  float64
	RaftMultiplier   int
	HeartbeatsPerSec float64
	Binpack          Phase
	Spread           Phase
	Allocs           int
	PlaceSec         float64
	PlacementsPerSec float64
	EvalLatencyP50Ms float64
	EvalLatencyP99Ms float64
	// The plan applier's nomad.plan.apply timer over the placements
	// (go-metrics keeps count, mean and max, not percentiles).
	PlanApplies        int
	PlanApplyMeanMs    float64
	PlanApplyMaxMs     float64
	ServerHeapPerNode  float64
	ServerHeapPerAlloc float64
	// Not in HeapAlloc: goroutine stacks and goroutines the servers
	// hold per ready, idle node.
	ServerStackPerNode      float64
	ServerGoroutinesPerNode float64
	SimHeapPerNode          float64
	SimGoroutines           int
	Storm                   Storm
	Errors                  []string `json:",omitempty"`
}

// Phase is one batch of jobs registered at once.
type Phase struct {
	Jobs             int
	Allocs           int
	Sec              float64
	PlacementsPerSec float64
	Evals            int
	EvalP50Ms        float64
	EvalP99Ms        float64
}

// Storm is the disconnect-and-return storm.
type Storm struct {
	Nodes        int
	DownSec      float64 // cut off until the servers marked them all down
	MaxDown      int     // most nodes down at once
	EvalsCreated int
	ConvergeSec  float64 // back until nodes ready, every job at count, old allocs stopped
	Duplicates   int     // most allocs running beyond a job's count at any sample
	Converged    bool
	// Elections counts the times a server became leader while the nodes
	// were cut off: each one re-arms every live node's failover TTL.
	Elections int
	// NodeDownEntries counts the raft entries that marked nodes down.
	NodeDownEntries int
	// Starvation is what the servers' process got of the machine while
	// the nodes were cut off.
	Starvation procStarvation
}

func TestBenchCluster(t *testing.T) {
	if *flagDrover == "" {
		t.Skip("-drover (the path of bin/drover) is required; run `make bench-cluster`")
	}
	var results []*Result
	for _, ns := range splitInts(t, *flagServers) {
		for _, nn := range splitInts(t, *flagNodes) {
			t.Run(fmt.Sprintf("servers=%d/nodes=%d", ns, nn), func(t *testing.T) {
				r := runVariant(t, ns, nn)
				results = append(results, r)
				printTable(results)
				// Now, not after the servers' cleanup: a run cut short
				// keeps the figures it has.
				writeJSON(t, results)
			})
		}
	}
}

func writeJSON(t *testing.T, results []*Result) {
	if *flagJSON == "" {
		return
	}
	buf, _ := json.MarshalIndent(results, "", "  ")
	if err := os.WriteFile(*flagJSON, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

func splitInts(t *testing.T, s string) []int {
	var out []int
	for _, p := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			t.Fatalf("%q: expected positive whole numbers separated by commas", s)
		}
		out = append(out, n)
	}
	return out
}

// startServers starts n servers and returns the leader and the
// telemetry of each (the plan applier's timer is read from the leader's).
func startServers(t *testing.T, n int, logw io.Writer) (*nomad.Server, []*nomad.Server, []string, map[*nomad.Server]*telemetry.Telemetry) {
	var servers []*nomad.Server
	tels := map[*nomad.Server]*telemetry.Telemetry{}
	for i := 0; i < n; i++ {
		i := i
		tel, err := telemetry.New(telemetry.Config{DisableHostname: true, InMemoryCollectionInterval: 5 * time.Second,
			InMemoryRetentionPeriod: 30 * time.Minute}.WithDefaults(), fmt.Sprintf("bench-s%d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tel.Shutdown)
		servers = append(servers, nomadtest.Server(t, func(c *nomad.Config) {
			c.Metrics = tel.Metrics()
			c.NodeName = fmt.Sprintf("bench-s%d", i)
			c.NumSchedulers = runtime.NumCPU()
			c.MaxHeartbeatsPerSecond = *flagHBRate
			c.Logger = hclog.New(&hclog.LoggerOptions{Name: c.NodeName, Level: hclog.Error})
			if logw != nil {
				c.Logger = hclog.New(&hclog.LoggerOptions{Name: c.NodeName, Level: hclog.Warn, Output: logw})
			}
			rc := raft.DefaultConfig()
			rc.CommitTimeout = 5 * time.Millisecond
			c.RaftConfig = rc
			c.RaftMultiplier = *flagRaftMult
			if n > 1 {
				c.BootstrapExpect = n
			}
		}))
		tels[servers[i]] = tel
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	leader := nomadtest.WaitForLeader(t, time.Minute, servers...)
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, s.RPCAddr())
	}
	return leader, servers, addrs, tels
}

// timerStats sums a go-metrics timer over the retained intervals: how
// many samples, their mean and their maximum, in milliseconds.
func timerStats(tel *telemetry.Telemetry, name string) (count int, mean, maxMs float64) {
	var sum float64
	for _, iv := range tel.Intervals() {
		iv.RLock()
		for _, sv := range iv.Samples {
			// The service name may come in front ("nomad.nomad.plan.apply").
			if !strings.HasSuffix(sv.Name, name) || sv.AggregateSample == nil {
				continue
			}
			count += sv.Count
			sum += sv.Sum
			maxMs = max(maxMs, sv.Max)
		}
		iv.RUnlock()
	}
	if count > 0 {
		mean = sum / float64(count)
	}
	return count, mean, maxMs
}

// memUse is what the test process (the in-process servers) holds: the
// heap the targets are about, and the goroutine stacks and goroutines,
// which HeapAlloc does not count (a goroutine parked per waiting node
// costs its stack as well as its heap records).
type memUse struct {
	heap, stack uint64
	goroutines  int
}

// heap reads memUse five times 200 ms apart and returns the median of
// each: a single reading after a GC also counts what in-flight requests
// hold at that instant (a few hundred heartbeats a second, each with its
// buffers), which made the per-node figure vary by ±50 B run to run.
func heap() memUse {
	const n = 5
	var heaps, stacks []uint64
	var gs []int
	for i := range n {
		if i > 0 {
			time.Sleep(200 * time.Millisecond) // spacing the readings, not synchronisation
		}
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heaps, stacks, gs = append(heaps, ms.HeapAlloc), append(stacks, ms.StackInuse), append(gs, runtime.NumGoroutine())
	}
	slices.Sort(heaps)
	slices.Sort(stacks)
	slices.Sort(gs)
	return memUse{heap: heaps[n/2], stack: stacks[n/2], goroutines: gs[n/2]}
}

// writeHeapProfile records where the servers' heap goes (go tool pprof
// -sample_index=inuse_space), for work on the heap targets.
func writeHeapProfile(t *testing.T, path string) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// simStats is what nodesim writes to its -stats-file.
type simStats struct {
	HeapAlloc     uint64
	HeapLive      uint64
	Goroutines    int
	Nodes         int
	Registered    int
	Heartbeats    int64
	AllocsRunning int64
	NodesFaulted  int64
	NodesReturned int64
}

func readSim(t *testing.T, path string) simStats {
	var st simStats
	for deadline := time.Now().Add(30 * time.Second); ; {
		b, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(b, &st) == nil {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("reading nodesim stats %s: %v", path, err)
		}
		time.Sleep(200 * time.Millisecond) // polling a file another process writes
	}
}

// waitUntil polls cond every interval until it holds or the phase
// timeout passes; it reports whether cond held.
func waitUntil(interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(*flagTimeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval) // polling the servers' state at a fixed rate
	}
}

func runVariant(t *testing.T, nServers, nNodes int) *Result {
	r := &Result{Servers: nServers, Nodes: nNodes, LoadAvgBefore: loadavg()}
	var logw io.Writer
	if *flagServerLog != "" {
		f, err := os.Create(fmt.Sprintf("%s-%d-%d.log", *flagServerLog, nServers, nNodes))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		logw = f
	}
	leader, servers, addrs, tels := startServers(t, nServers, logw)
	st := leader.State()
	// The servers' fixed cost (raft, bolt, caches) is not the nodes'.
	base := heap()

	ttl := max(10*time.Second, time.Duration(float64(nNodes)/(*flagHBRate)*float64(time.Second)))
	r.HeartbeatTTLSec = ttl.Seconds()
	r.RaftMultiplier = *flagRaftMult
	// The outage lasts until the servers have marked every cut-off node
	// down (the storm ends it with SIGUSR2), or -phase-timeout.
	faultFor := 24 * time.Hour
	dir := t.TempDir()
	statsPath := filepath.Join(dir, "nodesim.json")
	logf, err := os.Create(filepath.Join(dir, "nodesim.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(*flagDrover, "nodesim", "-servers", strings.Join(addrs, ","), "-count", strconv.Itoa(nNodes),
		"-meta", fmt.Sprintf("rack=r{i%%%d}", *flagRacks), "-cpu", "4000", "-memory", "8192", "-seed", "1",
		"-stats-file", statsPath, "-stats-interval", "1s",
		"-fault-stop-heartbeat", strconv.FormatFloat(float64(*flagStorm)/float64(nNodes), 'f', -1, 64),
		"-fault-for", faultFor.String(), "-fault-return", "1")
	cmd.Stdout, cmd.Stderr = logf, logf
	if *flagSimNice != 0 {
		cmd = exec.Command("nice", append([]string{"-n", strconv.Itoa(*flagSimNice)}, cmd.Args...)...)
		cmd.Stdout, cmd.Stderr = logf, logf
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	}()

	// Nodes ready.
	start := time.Now()
	if !waitUntil(500*time.Millisecond, func() bool { return countNodes(t, st, structs.NodeStatusReady) == nNodes }) {
		t.Fatalf("only %d of %d nodes ready after %s; see %s", countNodes(t, st, structs.NodeStatusReady), nNodes, *flagTimeout, logf.Name())
	}
	r.NodesReadySec = time.Since(start).Seconds()

	// Heartbeats handled, over one TTL with the fleet idle.
	s0, t0 := readSim(t, statsPath), time.Now()
	time.Sleep(min(ttl, 20*time.Second)) // the measurement window itself
	s1 := readSim(t, statsPath)
	r.HeartbeatsPerSec = float64(s1.Heartbeats-s0.Heartbeats) / time.Since(t0).Seconds()
	withNodes := heap()
	if *flagHeapProf != "" {
		writeHeapProfile(t, fmt.Sprintf("%s-%d-%d-nodes.pprof", *flagHeapProf, nServers, nNodes))
	}
	r.ServerHeapPerNode = float64(withNodes.heap-base.heap) / float64(nNodes) / float64(nServers)
	r.ServerStackPerNode = float64(int64(withNodes.stack)-int64(base.stack)) / float64(nNodes) / float64(nServers)
	r.ServerGoroutinesPerNode = float64(withNodes.goroutines-base.goroutines) / float64(nNodes) / float64(nServers)

	// Placement: binpack, then spread over the racks.
	half := *flagAllocs / 2
	r.Binpack = place(t, leader, "bp", half, nil)
	r.Spread = place(t, leader, "sp", *flagAllocs-half, []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}})
	r.Allocs = r.Binpack.Allocs + r.Spread.Allocs
	r.PlaceSec = r.Binpack.Sec + r.Spread.Sec
	r.PlacementsPerSec = float64(r.Allocs) / r.PlaceSec
	var lat []float64
	for _, p := range []string{"bp", "sp"} {
		lat = append(lat, evalLatencies(t, st, p)...)
	}
	r.EvalLatencyP50Ms, r.EvalLatencyP99Ms = pct(lat, 50), pct(lat, 99)
	r.PlanApplies, r.PlanApplyMeanMs, r.PlanApplyMaxMs = timerStats(tels[leader], "nomad.plan.apply")
	withAllocs := heap()
	if *flagHeapProf != "" {
		writeHeapProfile(t, fmt.Sprintf("%s-%d-%d-allocs.pprof", *flagHeapProf, nServers, nNodes))
	}
	r.ServerHeapPerAlloc = float64(int64(withAllocs.heap)-int64(withNodes.heap)) / float64(r.Allocs) / float64(nServers)
	sim := readSim(t, statsPath)
	r.SimHeapPerNode = float64(sim.HeapLive) / float64(nNodes)
	r.SimGoroutines = sim.Goroutines

	r.Storm = storm(t, leader, servers, cmd, nNodes)
	r.LoadAvgAfter = loadavg()
	return r
}
