//go:build benchcluster

package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func countNodes(t *testing.T, st *state.StateStore, status string) int {
	it, err := st.Nodes(nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if raw.(*structs.Node).Status == status {
			n++
		}
	}
	return n
}

func benchJob(id string, count int, spreads []*structs.Spread) *structs.Job {
	return &structs.Job{ID: id, Name: id, Namespace: structs.DefaultNamespace, Region: structs.DefaultRegion,
		Type: structs.JobTypeService, Priority: 50, Datacenters: []string{"dc1"}, NodePool: structs.DefaultNodePool,
		Spreads: spreads,
		TaskGroups: []*structs.TaskGroup{{Name: "g", Count: count, Tasks: []*structs.Task{{Name: "t", Driver: "mock_driver",
			Config: map[string]any{}, Resources: &structs.Resources{CPU: 100, MemoryMB: 128}}}}}}
}

// jobAllocs counts a job's allocs the servers want running and that
// their clients report running, and those beyond the job's count.
func jobAllocs(t *testing.T, st *state.StateStore, id string) (running, stale int) {
	as, err := st.AllocsByJob(nil, structs.DefaultNamespace, id, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		switch {
		case a.DesiredStatus == structs.AllocDesiredStatusRun && a.ClientStatus == structs.AllocClientStatusRunning:
			running++
		case a.DesiredStatus != structs.AllocDesiredStatusRun && !a.ClientTerminalStatus():
			stale++
		}
	}
	return running, stale
}

// place registers allocs/jobSize jobs at once and waits until every alloc
// is reported running.
func place(t *testing.T, s *nomad.Server, prefix string, allocs int, spreads []*structs.Spread) Phase {
	st := s.State()
	var ids []string
	for i := 0; i*jobSize < allocs; i++ {
		ids = append(ids, fmt.Sprintf("%s-%d", prefix, i))
	}
	start := time.Now()
	for i, id := range ids {
		count := min(jobSize, allocs-i*jobSize)
		var resp structs.JobRegisterResponse
		req := &structs.JobRegisterRequest{Job: benchJob(id, count, spreads), WriteRequest: structs.WriteRequest{Region: "global"}}
		if err := s.RPC("Job.Register", req, &resp); err != nil {
			t.Fatalf("registering %s: %v", id, err)
		}
	}
	ok := waitUntil(250*time.Millisecond, func() bool {
		total := 0
		for _, id := range ids {
			r, _ := jobAllocs(t, st, id)
			total += r
		}
		return total == allocs
	})
	if !ok {
		t.Fatalf("%s: not every alloc running after %s", prefix, *flagTimeout)
	}
	sec := time.Since(start).Seconds()
	lat := evalLatencies(t, st, prefix)
	return Phase{Jobs: len(ids), Allocs: allocs, Sec: sec, PlacementsPerSec: float64(allocs) / sec, Evals: len(lat),
		EvalP50Ms: pct(lat, 50), EvalP99Ms: pct(lat, 99)}
}

// evalLatencies are, for the finished evals of the jobs named prefix-*,
// the time from creation to the last update, in milliseconds.
func evalLatencies(t *testing.T, st *state.StateStore, prefix string) []float64 {
	it, err := st.Evals(nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for raw := it.Next(); raw != nil; raw = it.Next() {
		e := raw.(*structs.Evaluation)
		if !strings.HasPrefix(e.JobID, prefix+"-") || e.Status != structs.EvalStatusComplete {
			continue
		}
		out = append(out, float64(e.ModifyTime-e.CreateTime)/1e6)
	}
	return out
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}

// storm cuts nodes off (nodesim's configured fault, by SIGUSR1), waits
// for the servers to mark them all down, brings them back (SIGUSR2) and
// measures how long the cluster takes to converge, and whether any job
// ever ran more than its count.
func storm(t *testing.T, s *nomad.Server, servers []*nomad.Server, cmd *exec.Cmd, nNodes int) Storm {
	st := s.State()
	out := Storm{Nodes: *flagStorm}
	elections := watchElections(t, servers)
	defer elections.stop()
	index0, _ := st.LatestIndex()
	var jobs []string
	var counts []int
	it, _ := st.Jobs(nil)
	for raw := it.Next(); raw != nil; raw = it.Next() {
		j := raw.(*structs.Job)
		jobs, counts = append(jobs, j.ID), append(counts, j.TaskGroups[0].Count)
	}
	dupes := func() (over, stale int) {
		for i, id := range jobs {
			r, s := jobAllocs(t, st, id)
			over += max(0, r-counts[i])
			stale += s
		}
		return over, stale
	}
	stopProfile := startCPUProfile(t, fmt.Sprintf("%s-%d-%d.pprof", *flagStormCPU, len(servers), nNodes))
	proc0 := sampleProc()
	cut := time.Now()
	elections.since(cut)
	if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	waitUntil(500*time.Millisecond, func() bool {
		o, _ := dupes()
		out.Duplicates = max(out.Duplicates, o)
		out.MaxDown = max(out.MaxDown, countNodes(t, st, structs.NodeStatusDown))
		return out.MaxDown >= *flagStorm
	})
	out.DownSec = time.Since(cut).Seconds()
	stopProfile()
	out.Starvation = starvationSince(proc0)
	out.NodeDownEntries = nodeDownEntries(t, s, index0)
	out.Elections = elections.count()
	for _, at := range elections.times() {
		t.Logf("storm: a server became leader %.1fs after the cut", at.Sub(cut).Seconds())
	}
	if out.MaxDown < *flagStorm {
		t.Logf("storm: only %d of %d nodes were marked down within %s", out.MaxDown, *flagStorm, *flagTimeout)
	}
	if err := cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	out.Converged = waitUntil(500*time.Millisecond, func() bool {
		o, stale := dupes()
		out.Duplicates = max(out.Duplicates, o)
		if time.Now().Before(back) || countNodes(t, st, structs.NodeStatusReady) != nNodes || stale > 0 {
			return false
		}
		for i, id := range jobs {
			if r, _ := jobAllocs(t, st, id); r != counts[i] {
				return false
			}
		}
		return true
	})
	out.ConvergeSec = time.Since(back).Seconds()
	eit, _ := st.Evals(nil)
	for raw := eit.Next(); raw != nil; raw = eit.Next() {
		if raw.(*structs.Evaluation).CreateIndex > index0 {
			out.EvalsCreated++
		}
	}
	if !out.Converged {
		t.Errorf("storm: did not converge within %s of the nodes' return", *flagTimeout)
	}
	if out.Duplicates > 0 {
		t.Errorf("storm: up to %d allocs ran beyond their jobs' counts", out.Duplicates)
	}
	return out
}

func printTable(rs []*Result) {
	w := os.Stdout
	fmt.Fprintf(w, "\n%-34s", "")
	for _, r := range rs {
		fmt.Fprintf(w, " %18s", fmt.Sprintf("%d srv / %d nodes", r.Servers, r.Nodes))
	}
	fmt.Fprintln(w)
	row := func(name string, f func(r *Result) string) {
		fmt.Fprintf(w, "%-34s", name)
		for _, r := range rs {
			fmt.Fprintf(w, " %18s", f(r))
		}
		fmt.Fprintln(w)
	}
	f1 := func(v float64) string { return fmt.Sprintf("%.1f", v) }
	row("load average before / after", func(r *Result) string { return r.LoadAvgBefore + "/" + strings.Fields(r.LoadAvgAfter + " ?")[0] })
	row("nodes ready (s)", func(r *Result) string { return f1(r.NodesReadySec) })
	row("heartbeat TTL (s)", func(r *Result) string { return f1(r.HeartbeatTTLSec) })
	row("raft multiplier", func(r *Result) string { return fmt.Sprint(r.RaftMultiplier) })
	row("heartbeats handled /s", func(r *Result) string { return f1(r.HeartbeatsPerSec) })
	row("binpack: allocs in s", func(r *Result) string { return fmt.Sprintf("%d in %.1f", r.Binpack.Allocs, r.Binpack.Sec) })
	row("binpack placements/s", func(r *Result) string { return f1(r.Binpack.PlacementsPerSec) })
	row("spread (racks): allocs in s", func(r *Result) string { return fmt.Sprintf("%d in %.1f", r.Spread.Allocs, r.Spread.Sec) })
	row("spread placements/s", func(r *Result) string { return f1(r.Spread.PlacementsPerSec) })
	row("all: placements/s end to end", func(r *Result) string { return f1(r.PlacementsPerSec) })
	row("eval latency p50 / p99 (ms)", func(r *Result) string { return fmt.Sprintf("%.0f / %.0f", r.EvalLatencyP50Ms, r.EvalLatencyP99Ms) })
	row("plan apply mean / max (ms), plans", func(r *Result) string {
		return fmt.Sprintf("%.0f / %.0f, %d", r.PlanApplyMeanMs, r.PlanApplyMaxMs, r.PlanApplies)
	})
	row("server heap per node (B)", func(r *Result) string { return fmt.Sprintf("%.0f", r.ServerHeapPerNode) })
	row("server stacks per node (B), goroutines per node", func(r *Result) string {
		return fmt.Sprintf("%.0f, %.2f", r.ServerStackPerNode, r.ServerGoroutinesPerNode)
	})
	row("server heap per alloc (B)", func(r *Result) string { return fmt.Sprintf("%.0f", r.ServerHeapPerAlloc) })
	row("nodesim heap per node (B)", func(r *Result) string { return fmt.Sprintf("%.0f", r.SimHeapPerNode) })
	row("nodesim goroutines", func(r *Result) string { return fmt.Sprint(r.SimGoroutines) })
	row("storm: nodes cut off", func(r *Result) string { return fmt.Sprint(r.Storm.Nodes) })
	row("storm: all marked down after (s)", func(r *Result) string { return f1(r.Storm.DownSec) })
	row("storm: most nodes down at once", func(r *Result) string { return fmt.Sprint(r.Storm.MaxDown) })
	row("storm: evals created", func(r *Result) string { return fmt.Sprint(r.Storm.EvalsCreated) })
	row("storm: converged after return (s)", func(r *Result) string {
		if !r.Storm.Converged {
			return "no"
		}
		return f1(r.Storm.ConvergeSec)
	})
	row("storm: duplicates", func(r *Result) string { return fmt.Sprint(r.Storm.Duplicates) })
	row("storm: elections while cut off", func(r *Result) string { return fmt.Sprint(r.Storm.Elections) })
	row("storm: node-down raft entries", func(r *Result) string { return fmt.Sprint(r.Storm.NodeDownEntries) })
	row("storm: servers' CPU / run-queue wait (s)", func(r *Result) string {
		return fmt.Sprintf("%.0f / %.0f", r.Storm.Starvation.CPUSec, r.Storm.Starvation.RunQueueWaitSec)
	})
	row("storm: goroutine wait p99 / max (ms)", func(r *Result) string {
		return fmt.Sprintf("%.0f / %.0f", r.Storm.Starvation.GoSchedP99Ms, r.Storm.Starvation.GoSchedMaxMs)
	})
	row("storm: GC pause max (ms)", func(r *Result) string { return fmt.Sprintf("%.0f", r.Storm.Starvation.GCPauseMaxMs) })
}
