package nodesim

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/testclient"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
)

// TestSimulatedNodeLooksLikeARealClientToTheServers runs a real client and
// a simulated node against the same server and compares what the server
// holds for each: the node record, and the allocs of one job placed on
// both (distinct_hosts) as they go pending -> running -> complete.
func TestSimulatedNodeLooksLikeARealClientToTheServers(t *testing.T) {
	s := testCluster(t)
	real := testclient.New(t, func(c *config.Config) { c.Servers = []string{s.RPCAddr()} })
	sim := startSim(t, s, Config{Count: 1, Seed: 4})
	realID, simID := real.Node().ID, sim.NodeIDs()[0]

	wait.For(t, 30*time.Second, func() (bool, string) {
		for _, id := range []string{realID, simID} {
			if n, _ := s.State().NodeByID(nil, id); n == nil || n.Status != structs.NodeStatusReady {
				return false, id + " not ready"
			}
		}
		return true, ""
	})
	// Both wait for their allocs the same way: registered for the alloc
	// notices the server pushes (Node.WatchAllocs), with no blocking
	// query held on the server.
	wait.For(t, 30*time.Second, func() (bool, string) {
		for _, id := range []string{realID, simID} {
			if !s.AllocNoticeRegistered(id) {
				return false, id + " not registered for alloc notices"
			}
		}
		return s.BlockingQueries() == 0, fmt.Sprintf("%d blocking queries held on the server", s.BlockingQueries())
	})
	rn, _ := s.State().NodeByID(nil, realID)
	sn, _ := s.State().NodeByID(nil, simID)
	for _, c := range []struct {
		what       string
		real, simv any
	}{
		{"Status", rn.Status, sn.Status},
		{"SchedulingEligibility", rn.SchedulingEligibility, sn.SchedulingEligibility},
		{"NodePool", rn.NodePool, sn.NodePool},
		{"Datacenter", rn.Datacenter, sn.Datacenter},
		{"mock_driver healthy", rn.Drivers["mock_driver"] != nil && rn.Drivers["mock_driver"].Healthy, sn.Drivers["mock_driver"] != nil && sn.Drivers["mock_driver"].Healthy},
		{"attr kernel.name", rn.Attributes.Value("kernel.name"), sn.Attributes.Value("kernel.name")},
		{"attr driver.mock_driver", rn.Attributes.Value("driver.mock_driver"), sn.Attributes.Value("driver.mock_driver")},
		{"has CPU", rn.NodeResources.Cpu.CpuShares > 0, sn.NodeResources.Cpu.CpuShares > 0},
		{"has memory", rn.NodeResources.Memory.MemoryMB > 0, sn.NodeResources.Memory.MemoryMB > 0},
		{"has a host network", len(rn.NodeResources.NodeNetworks) > 0, len(sn.NodeResources.NodeNetworks) > 0},
		{"has a secret", rn.SecretID != "", sn.SecretID != ""},
	} {
		if fmt.Sprint(c.real) != fmt.Sprint(c.simv) {
			t.Errorf("%s: real client %v, simulated %v", c.what, c.real, c.simv)
		}
	}

	job := simJob("both", structs.JobTypeBatch, 2, map[string]any{"run_for": "2s"})
	job.Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts, RTarget: "true"}}
	register(t, s, job)
	seen := map[string]map[string]bool{} // node -> client statuses seen
	wait.For(t, 60*time.Second, func() (bool, string) {
		as := allocs(t, s, "both")
		for _, a := range as {
			if seen[a.NodeID] == nil {
				seen[a.NodeID] = map[string]bool{}
			}
			seen[a.NodeID][a.ClientStatus] = true
		}
		return len(as) == 2 && countStatus(as, structs.AllocClientStatusComplete) == 2, fmt.Sprintf("%d allocs, %d complete", len(as), countStatus(as, structs.AllocClientStatusComplete))
	})
	if got := sim.Stats().AllocNotices; got == 0 {
		t.Error("the simulated node learned of its alloc without a notice")
	}
	if got := s.AllocNoticesPushed(); got < 2 {
		t.Errorf("the server pushed %d alloc notices; want at least one to each node", got)
	}
	byNode := map[string]*structs.Allocation{}
	for _, a := range allocs(t, s, "both") {
		byNode[a.NodeID] = a
	}
	ra, sa := byNode[realID], byNode[simID]
	if ra == nil || sa == nil {
		t.Fatalf("allocs not on both nodes: %v", byNode)
	}
	if !seen[simID][structs.AllocClientStatusRunning] || !seen[realID][structs.AllocClientStatusRunning] {
		t.Errorf("running seen on real %v, simulated %v", seen[realID], seen[simID])
	}
	rt, st := ra.TaskStates["t"], sa.TaskStates["t"]
	if rt.State != st.State || rt.Failed != st.Failed || st.StartedAt.IsZero() || st.FinishedAt.IsZero() {
		t.Errorf("task state: real %+v, simulated %+v", rt, st)
	}
	// Every event type the simulator records, the real client records in
	// the same order (it records more: setup hooks and the like).
	var realTypes []string
	for _, e := range rt.Events {
		realTypes = append(realTypes, e.Type)
	}
	j := 0
	for _, e := range st.Events {
		for j < len(realTypes) && realTypes[j] != e.Type {
			j++
		}
		if j == len(realTypes) {
			t.Fatalf("simulated events %v are not a subsequence of the real client's %v", eventTypes(st.Events), realTypes)
		}
		j++
	}
}

func eventTypes(es []*structs.TaskEvent) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}
