package nodesim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/helper/tlsutil/tlstest"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/nomadtest"
	"github.com/drover-sched/drover/structs"
)

// testCluster starts a real server with short heartbeat timings, so that
// a node that stops heartbeating is marked down within seconds.
func testCluster(t *testing.T) *nomad.Server {
	t.Helper()
	s := nomadtest.Server(t, func(c *nomad.Config) {
		c.MinHeartbeatTTL = time.Second
		c.HeartbeatGrace = time.Second
		c.NumSchedulers = 2
	})
	nomadtest.WaitForLeader(t, 10*time.Second, s)
	return s
}

func startSim(t *testing.T, s *nomad.Server, cfg Config) *Sim {
	t.Helper()
	cfg.Servers = []string{s.RPCAddr()}
	cfg.UpdateInterval = 50 * time.Millisecond
	cfg.MaxBackoff = time.Second
	sim, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sim.Start()
	t.Cleanup(sim.Stop)
	return sim
}

func simJob(id, typ string, count int, config map[string]any) *structs.Job {
	return &structs.Job{ID: id, Name: id, Namespace: structs.DefaultNamespace, Region: structs.DefaultRegion, Type: typ,
		Priority: 50, Datacenters: []string{"dc1"}, NodePool: structs.DefaultNodePool,
		TaskGroups: []*structs.TaskGroup{{Name: "g", Count: count,
			RestartPolicy: &structs.RestartPolicy{Attempts: 0, Interval: time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeFail},
			Tasks: []*structs.Task{{Name: "t", Driver: "mock_driver", Config: config,
				Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}}}}}
}

func register(t *testing.T, s *nomad.Server, job *structs.Job) {
	t.Helper()
	var resp structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: structs.WriteRequest{Region: "global"}}, &resp); err != nil {
		t.Fatalf("registering %s: %v", job.ID, err)
	}
}

func allocs(t *testing.T, s *nomad.Server, job string) []*structs.Allocation {
	t.Helper()
	as, err := s.State().AllocsByJob(nil, structs.DefaultNamespace, job, true)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

func countStatus(as []*structs.Allocation, status string) int {
	n := 0
	for _, a := range as {
		if a.ClientStatus == status {
			n++
		}
	}
	return n
}

func TestSimulatedNodesRegisterAsRealClientsWithTheirOwnIdentity(t *testing.T) {
	s := testCluster(t)
	sim := startSim(t, s, Config{Count: 4, Seed: 1, Datacenters: []string{"dc1", "dc2"}, NodeClass: "sim",
		Meta: map[string]string{"rack": "r{i%2}", "slot": "s{i/2}"}, CPU: 2000, MemoryMB: 1024})
	ids := sim.NodeIDs()
	wait.For(t, 20*time.Second, func() (bool, string) {
		for _, id := range ids {
			n, _ := s.State().NodeByID(nil, id)
			if n == nil || n.Status != structs.NodeStatusReady {
				return false, "node " + id + " not ready"
			}
		}
		return true, ""
	})
	for i, id := range ids {
		n, _ := s.State().NodeByID(nil, id)
		if n.SecretID != sim.Secret(i) {
			t.Errorf("node %d: server holds secret %q, the simulator uses %q", i, n.SecretID, sim.Secret(i))
		}
		wantDC := []string{"dc1", "dc2"}[i%2]
		if n.Datacenter != wantDC || n.NodeClass != "sim" || n.Meta["rack"] != fmt.Sprintf("r%d", i%2) || n.Meta["slot"] != fmt.Sprintf("s%d", i/2) {
			t.Errorf("node %d: dc %q class %q meta %v", i, n.Datacenter, n.NodeClass, n.Meta)
		}
		if n.NodeResources.Cpu.CpuShares != 2000 || n.NodeResources.Memory.MemoryMB != 1024 || !n.Drivers["mock_driver"].Healthy {
			t.Errorf("node %d: resources %+v drivers %v", i, n.NodeResources, n.Drivers)
		}
	}
	// The servers check the secret on node calls: the simulator's works
	// (the nodes are ready), and another one is refused.
	req := &structs.NodeUpdateStatusRequest{NodeID: ids[0], SecretID: sim.Secret(1), Status: structs.NodeStatusReady,
		WriteRequest: structs.WriteRequest{Region: "global"}}
	var resp structs.NodeUpdateResponse
	if err := s.RPC("Node.UpdateStatus", req, &resp); !errors.Is(err, structs.ErrNodeSecretDenied) {
		t.Fatalf("heartbeat with another node's secret: got %v, want %v", err, structs.ErrNodeSecretDenied)
	}
	// Heartbeats follow the TTL the server gives (1s minimum here): each
	// node heartbeats at about half of it.
	wait.For(t, 20*time.Second, func() (bool, string) {
		st := sim.Stats()
		return st.Heartbeats >= 8, fmt.Sprintf("%d heartbeats", st.Heartbeats)
	})
}

func TestSimulatedAllocsFollowRunForAndExitCode(t *testing.T) {
	s := testCluster(t)
	startSim(t, s, Config{Count: 3, Seed: 2})
	register(t, s, simJob("ok", structs.JobTypeBatch, 3, map[string]any{"run_for": "1s", "exit_code": 0}))
	register(t, s, simJob("bad", structs.JobTypeBatch, 2, map[string]any{"run_for": "1s", "exit_code": 3}))
	register(t, s, simJob("web", structs.JobTypeService, 3, map[string]any{}))
	register(t, s, simJob("broken", structs.JobTypeBatch, 1, map[string]any{"start_error": "no such image"}))

	// Running first: the servers see pending -> running -> complete.
	sawRunning := false
	wait.For(t, 30*time.Second, func() (bool, string) {
		as := allocs(t, s, "ok")
		sawRunning = sawRunning || countStatus(as, structs.AllocClientStatusRunning) > 0
		return len(as) == 3 && countStatus(as, structs.AllocClientStatusComplete) == 3, fmt.Sprintf("%d ok allocs", len(as))
	})
	if !sawRunning {
		t.Error("no alloc of job ok was ever seen running before it completed")
	}
	wait.For(t, 30*time.Second, func() (bool, string) {
		as := allocs(t, s, "bad")
		failed := countStatus(as, structs.AllocClientStatusFailed)
		return failed >= 2, fmt.Sprintf("%d of %d bad allocs failed", failed, len(as))
	})
	for _, a := range allocs(t, s, "bad") {
		if a.ClientStatus != structs.AllocClientStatusFailed {
			continue
		}
		ts := a.TaskStates["t"]
		if ts == nil || !ts.Failed || ts.State != structs.TaskStateDead {
			t.Fatalf("failed alloc %s task state %+v", a.ID, ts)
		}
		last := ts.Events[len(ts.Events)-1]
		if last.Type != structs.TaskNotRestarting {
			t.Errorf("last event %q, want %q", last.Type, structs.TaskNotRestarting)
		}
	}
	wait.For(t, 30*time.Second, func() (bool, string) {
		as := allocs(t, s, "web")
		return countStatus(as, structs.AllocClientStatusRunning) == 3, fmt.Sprintf("%d web allocs", len(as))
	})
	wait.For(t, 30*time.Second, func() (bool, string) {
		as := allocs(t, s, "broken")
		return countStatus(as, structs.AllocClientStatusFailed) >= 1, "broken not failed"
	})

	// A desired stop is obeyed: the allocs end complete.
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "web", WriteRequest: structs.WriteRequest{Region: "global", Namespace: structs.DefaultNamespace}}, &dresp); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 30*time.Second, func() (bool, string) {
		as := allocs(t, s, "web")
		return countStatus(as, structs.AllocClientStatusComplete) == 3, fmt.Sprintf("web allocs %d complete", countStatus(as, structs.AllocClientStatusComplete))
	})
}

func TestSimulatedNodeThatStopsHeartbeatingIsMarkedDownAndComesBack(t *testing.T) {
	s := testCluster(t)
	sim := startSim(t, s, Config{Count: 2, Seed: 3})
	register(t, s, simJob("web", structs.JobTypeService, 2, map[string]any{}))
	wait.For(t, 30*time.Second, func() (bool, string) {
		as := allocs(t, s, "web")
		return countStatus(as, structs.AllocClientStatusRunning) == 2, fmt.Sprintf("%d web allocs", len(as))
	})
	// The victim is a node that runs at least one of the allocs.
	victim := allocs(t, s, "web")[0].NodeID
	vi := 0
	for i, id := range sim.NodeIDs() {
		if id == victim {
			vi = i
		}
	}
	onVictim := 0
	for _, a := range allocs(t, s, "web") {
		if a.NodeID == victim {
			onVictim++
		}
	}
	sim.CutOff(vi)
	wait.For(t, 30*time.Second, func() (bool, string) {
		n, _ := s.State().NodeByID(nil, victim)
		return n.Status == structs.NodeStatusDown, "node is " + n.Status
	})
	// Its allocs are lost and replaced on the other node.
	wait.For(t, 30*time.Second, func() (bool, string) {
		as := allocs(t, s, "web")
		return countStatus(as, structs.AllocClientStatusLost) == onVictim && countStatus(as, structs.AllocClientStatusRunning) == 2,
			fmt.Sprintf("lost %d running %d", countStatus(as, structs.AllocClientStatusLost), countStatus(as, structs.AllocClientStatusRunning))
	})
	sim.Reconnect(vi)
	wait.For(t, 30*time.Second, func() (bool, string) {
		n, _ := s.State().NodeByID(nil, victim)
		return n.Status == structs.NodeStatusReady, "node is " + n.Status
	})
	// Back: exactly two run, none of them duplicated, and the lost one
	// on the returning node stays stopped.
	wait.For(t, 30*time.Second, func() (bool, string) {
		as := allocs(t, s, "web")
		running := 0
		for _, a := range as {
			if a.ClientStatus == structs.AllocClientStatusRunning && a.DesiredStatus == structs.AllocDesiredStatusRun {
				running++
			}
		}
		return running == 2 && countStatus(as, structs.AllocClientStatusRunning) == 2, fmt.Sprintf("%d running", running)
	})
	if st := sim.Stats(); st.NodesFaulted != 1 || st.NodesReturned != 1 {
		t.Fatalf("faulted %d returned %d", st.NodesFaulted, st.NodesReturned)
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Count: 0, Servers: []string{"x:1"}}, "count: expected between 1 and 1000000 nodes, got 0"},
		{Config{Count: 1}, "servers: at least one server RPC address"},
		{Config{Count: 1, Servers: []string{"x:1"}, Meta: map[string]string{"rack": "r{j}"}}, `meta "rack": template {j}: expected {i}, {i%N} or {i/N}`},
		{Config{Count: 1, Servers: []string{"x:1"}, Meta: map[string]string{"rack": "r{i%0}"}}, "N must be a positive whole number"},
		{Config{Count: 1, Servers: []string{"x:1"}, Fault: Fault{StopFraction: 1.5, For: time.Second}}, "fault: fractions must be between 0 and 1"},
		{Config{Count: 1, Servers: []string{"x:1"}, Fault: Fault{StopFraction: 0.5}}, "fault-for: a stop fraction needs a positive outage duration"},
	} {
		_, err := New(c.cfg)
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}

func TestMetaTemplates(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		i    int
		want string
	}{{"r{i%50}", 123, "r23"}, {"n{i}", 7, "n7"}, {"z{i/10}-{i%10}", 42, "z4-2"}, {"plain", 3, "plain"}} {
		got, err := expandMeta(c.tmpl, c.i)
		if err != nil || got != c.want {
			t.Errorf("expandMeta(%q, %d) = %q, %v; want %q", c.tmpl, c.i, got, err, c.want)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}

func TestSimulatedNodesSpeakTLSWhenTheServersRequireIt(t *testing.T) {
	ca := tlstest.NewCA(t)
	s := nomadtest.Server(t, func(c *nomad.Config) {
		c.TLS = ca.Manager(t, tlstest.Server, c.Region, nil)
	})
	nomadtest.WaitForLeader(t, 10*time.Second, s)

	// Without TLS the servers close the connection: nothing registers.
	plain, err := New(Config{Count: 1, Seed: 5, Servers: []string{s.RPCAddr()}, MaxBackoff: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	plain.Start()
	t.Cleanup(plain.Stop)

	sim, err := New(Config{Count: 2, Seed: 6, Servers: []string{s.RPCAddr()},
		TLS: ca.Manager(t, tlstest.Client, "global", nil).OutgoingRPC()})
	if err != nil {
		t.Fatal(err)
	}
	sim.Start()
	t.Cleanup(sim.Stop)
	wait.For(t, 30*time.Second, func() (bool, string) {
		st := sim.Stats()
		return st.Registered == 2, fmt.Sprintf("%d of 2 registered over TLS", st.Registered)
	})
	wait.For(t, 30*time.Second, func() (bool, string) {
		st := plain.Stats()
		return st.HeartbeatFailures >= 1, "the plaintext node has not failed yet"
	})
	if n, _ := s.State().NodeByID(nil, plain.NodeIDs()[0]); n != nil || plain.Stats().Registered != 0 {
		t.Fatalf("a plaintext node registered with a TLS server: %v", n)
	}
}

func TestInjectedFaultCutsNodesOffUntilItEnds(t *testing.T) {
	s := testCluster(t)
	sim := startSim(t, s, Config{Count: 4, Seed: 7, Fault: Fault{StopFraction: 0.5, For: time.Hour, ReturnFraction: 0.5}})
	wait.For(t, 30*time.Second, func() (bool, string) {
		return countNodes(s, structs.NodeStatusReady) == 4, "nodes not ready"
	})
	stopped, back := sim.InjectFault()
	if len(stopped) != 2 || len(back) != 1 {
		t.Fatalf("cut %v, returning %v; want 2 cut and 1 returning", stopped, back)
	}
	ids := sim.NodeIDs()
	wait.For(t, 30*time.Second, func() (bool, string) {
		for _, i := range stopped {
			if n, _ := s.State().NodeByID(nil, ids[i]); n.Status != structs.NodeStatusDown {
				return false, fmt.Sprintf("node %d is %s", i, n.Status)
			}
		}
		return true, ""
	})
	if n := sim.EndFault(); n != 1 {
		t.Fatalf("EndFault brought back %d nodes, want 1", n)
	}
	wait.For(t, 30*time.Second, func() (bool, string) {
		n, _ := s.State().NodeByID(nil, ids[back[0]])
		return n.Status == structs.NodeStatusReady, "returning node is " + n.Status
	})
	// The one not meant to return stays down; the others never went down.
	if n, _ := s.State().NodeByID(nil, ids[stopped[1]]); n.Status != structs.NodeStatusDown {
		t.Fatalf("node that was not to return is %s", n.Status)
	}
	if got := countNodes(s, structs.NodeStatusReady); got != 3 {
		t.Fatalf("%d nodes ready, want 3", got)
	}
}

func countNodes(s *nomad.Server, status string) int {
	it, _ := s.State().Nodes(nil)
	n := 0
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if raw.(*structs.Node).Status == status {
			n++
		}
	}
	return n
}
