package feasible

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// portJob asks for one static port http=8080 and memoryMB.
func portJob(memoryMB int) *structs.Job {
	job := simpleJob(1)
	tg := job.TaskGroups[0]
	tg.Networks = structs.Networks{{Mode: "host", ReservedPorts: []structs.Port{{Label: "http", Value: 8080}}}}
	tg.Tasks[0].Resources.MemoryMB = memoryMB
	return job
}

// runningPortAlloc is an allocation of job on node holding its ask,
// including the static port, as the client reports it running.
func runningPortAlloc(job *structs.Job, node *structs.Node) *structs.Allocation {
	a := MockAllocFor(job, job.TaskGroups[0], node, 0)
	ask, err := structs.GroupNetworkAsk(job.TaskGroups[0])
	if err != nil {
		panic(err)
	}
	var ports structs.AllocatedPorts
	for _, p := range ask.ReservedPorts {
		ports = append(ports, structs.AllocatedPortMapping{Label: p.Label, Value: p.Value})
	}
	a.AllocatedResources = structs.AllocatedResourcesFor(job.TaskGroups[0], ports)
	a.ClientStatus = structs.AllocClientStatusRunning
	return a
}

// PROMISE 1: resources are released only when the work has stopped.
func TestStoppedButRunningAllocationsKeepTheirResources(t *testing.T) {
	// One node with 7936 MB free; the old allocation holds 6000 MB and
	// port 8080; the new one asks for 6000 MB and port 8080.
	cases := []struct {
		name string
		// old changes the old allocation; plan may change the plan.
		old       func(a *structs.Allocation)
		plan      func(p *structs.Plan, a *structs.Allocation)
		newMemory int
		wantFit   bool
		wantDim   string
	}{
		{
			name:      "desired stop but still running keeps its memory",
			old:       func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop },
			newMemory: 6000, wantDim: "memory",
		},
		{
			name:      "desired stop but still running keeps its static port",
			old:       func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop },
			newMemory: 100, wantDim: "network: reserved port collision http=8080",
		},
		{
			name: "desired stop and unknown (disconnected) keeps its resources",
			old: func(a *structs.Allocation) {
				a.DesiredStatus, a.ClientStatus = structs.AllocDesiredStatusStop, structs.AllocClientStatusUnknown
			},
			newMemory: 6000, wantDim: "memory",
		},
		{
			name:      "stopped by this plan but still running keeps its resources",
			plan:      func(p *structs.Plan, a *structs.Allocation) { p.AppendStoppedAlloc(a, "job stopped", "", "") },
			newMemory: 6000, wantDim: "memory",
		},
		{
			name: "client-complete frees them",
			old: func(a *structs.Allocation) {
				a.DesiredStatus, a.ClientStatus = structs.AllocDesiredStatusStop, structs.AllocClientStatusComplete
			},
			newMemory: 6000, wantFit: true,
		},
		{
			name:      "client-failed frees them",
			old:       func(a *structs.Allocation) { a.ClientStatus = structs.AllocClientStatusFailed },
			newMemory: 6000, wantFit: true,
		},
		{
			name:      "marked lost by the plan frees them",
			plan:      func(p *structs.Plan, a *structs.Allocation) { p.AppendLostAlloc(a, "node down", time.Unix(1, 0)) },
			newMemory: 6000, wantFit: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node := MockNode()
			oldJob := portJob(6000)
			old := runningPortAlloc(oldJob, node)
			if tc.old != nil {
				tc.old(old)
			}
			f := newFixture(1, []*structs.Node{node}, old)
			if tc.plan != nil {
				tc.plan(f.plan, old)
			}
			// The job is stopped and run again: same job ID, new alloc.
			job := portJob(tc.newMemory)
			job.ID = oldJob.ID
			s := f.stack(job)
			option := s.Select(job.TaskGroups[0], nil)
			if (option != nil) != tc.wantFit {
				t.Fatalf("fit: got %v, want %v (metrics %+v)", option != nil, tc.wantFit, f.ctx.Metrics())
			}
			m := f.ctx.Metrics()
			if tc.wantDim != "" {
				if m.NodesExhausted != 1 || m.DimensionExhausted[tc.wantDim] != 1 || m.NodesFiltered != 0 {
					t.Fatalf("want the node exhausted on %q (not filtered), got %+v", tc.wantDim, m)
				}
				if m.ClassExhausted[node.ComputedClass] != 1 {
					t.Fatalf("want the class counted as exhausted, got %v", m.ClassExhausted)
				}
			}
			if option != nil {
				if p, ok := option.Resources.Shared.Ports.Get("http"); !ok || p.Value != 8080 {
					t.Fatalf("want static port 8080 granted, got %+v", option.Resources.Shared.Ports)
				}
			}
		})
	}
}

func TestProposedAllocs(t *testing.T) {
	node := MockNode()
	job := simpleJob(3)
	tg := job.TaskGroups[0]
	running := MockAllocFor(job, tg, node, 0)
	running.ClientStatus = structs.AllocClientStatusRunning
	stopping := MockAllocFor(job, tg, node, 1)
	stopping.ClientStatus = structs.AllocClientStatusRunning
	lost := MockAllocFor(job, tg, node, 2)
	done := MockAllocFor(job, tg, node, 3)
	done.ClientStatus = structs.AllocClientStatusComplete
	updated := MockAllocFor(job, tg, node, 4)
	f := newFixture(1, []*structs.Node{node}, running, stopping, lost, done, updated)
	f.plan.AppendStoppedAlloc(stopping, "stop", "", "")
	f.plan.AppendLostAlloc(lost, "lost", time.Unix(1, 0))
	inPlace := updated.Copy()
	inPlace.AllocatedResources.Tasks["web"].Memory.MemoryMB = 1024
	f.plan.AppendAlloc(inPlace)
	placed := MockAllocFor(job, tg, node, 5)
	f.plan.AppendAlloc(placed)

	got, err := f.ctx.ProposedAllocs(node.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*structs.Allocation{
		running.ID: running, stopping.ID: f.plan.NodeUpdate[node.ID][0], updated.ID: inPlace, placed.ID: placed,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d allocations, want %d", len(got), len(want))
	}
	for _, a := range got {
		if want[a.ID] != a {
			t.Fatalf("allocation %s: wrong version or not expected", a.Name)
		}
	}
	if f.plan.NodeUpdate[node.ID][0].DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatal("the stopping allocation should be returned in its stopped version")
	}
}

func TestPortsAndExhaustion(t *testing.T) {
	t.Run("a static port taken by an existing allocation exhausts the node on network", func(t *testing.T) {
		nodes := mockNodes(2, nil)
		other := portJob(100)
		var allocs []*structs.Allocation
		for _, n := range nodes {
			allocs = append(allocs, runningPortAlloc(other, n))
		}
		f := newFixture(1, nodes, allocs...)
		job := portJob(100)
		s := f.stack(job)
		if option := s.Select(job.TaskGroups[0], nil); option != nil {
			t.Fatal("port 8080 is taken everywhere")
		}
		m := f.ctx.Metrics()
		if m.NodesExhausted != 2 || m.DimensionExhausted["network: reserved port collision http=8080"] != 2 {
			t.Fatalf("want 2 nodes exhausted on the port, got %+v", m)
		}
	})
	t.Run("a node's reserved port cannot be asked for", func(t *testing.T) {
		node := MockNode()
		node.ReservedResources.Networks.ReservedHostPorts = "8080"
		f := newFixture(1, []*structs.Node{node})
		job := portJob(100)
		if option := f.stack(job).Select(job.TaskGroups[0], nil); option != nil {
			t.Fatal("port 8080 is reserved on the node")
		}
	})
	t.Run("dynamic ports never collide with existing or proposed ones", func(t *testing.T) {
		node := MockNode()
		node.NodeResources.MinDynamicPort = 20000
		node.NodeResources.MaxDynamicPort = 20009
		existingJob := portJob(10)
		existingJob.TaskGroups[0].Networks[0].ReservedPorts = []structs.Port{{Label: "a", Value: 20000}, {Label: "b", Value: 20005}}
		existing := runningPortAlloc(existingJob, node)
		f := newFixture(1, []*structs.Node{node}, existing)
		job := simpleJob(10)
		job.TaskGroups[0].Tasks[0].Resources.CPU = 10
		job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 10
		job.TaskGroups[0].Networks = structs.Networks{{Mode: "host", DynamicPorts: []structs.Port{{Label: "http"}, {Label: "admin"}}}}
		s := f.stack(job)
		used := map[int]bool{20000: true, 20005: true}
		for i := 0; i < 4; i++ {
			option := f.place(t, s, job, job.TaskGroups[0], i, nil)
			if option == nil {
				t.Fatalf("placement %d should fit: %+v", i, f.ctx.Metrics())
			}
			for _, p := range option.Resources.Shared.Ports {
				if p.Value < 20000 || p.Value > 20009 || used[p.Value] {
					t.Fatalf("placement %d got port %d, already used or out of range", i, p.Value)
				}
				used[p.Value] = true
			}
		}
		// Ten ports, two existing, eight proposed: nothing is left.
		if option := s.Select(job.TaskGroups[0], nil); option != nil {
			t.Fatal("the dynamic range is full")
		}
		if got := f.ctx.Metrics().DimensionExhausted["dynamic port selection failed"]; got != 1 {
			t.Fatalf("want exhaustion on dynamic ports, got %+v", f.ctx.Metrics().DimensionExhausted)
		}
	})
	t.Run("exhaustion is counted per dimension", func(t *testing.T) {
		nodes := mockNodes(5, func(i int, n *structs.Node) {
			switch i {
			case 0, 1:
				n.NodeResources.Cpu.CpuShares = 300
			case 2:
				n.NodeResources.Memory.MemoryMB = 300
			default:
				n.NodeResources.Disk.DiskMB = 4096
			}
		})
		f := newFixture(1, nodes)
		job := simpleJob(1)
		if option := f.stack(job).Select(job.TaskGroups[0], nil); option != nil {
			t.Fatal("no node has room")
		}
		m := f.ctx.Metrics()
		want := map[string]int{"cpu": 2, "memory": 1, "disk": 2}
		if m.NodesEvaluated != 5 || m.NodesExhausted != 5 || m.NodesFiltered != 0 {
			t.Fatalf("want 5 evaluated and exhausted, got %+v", m)
		}
		for dim, n := range want {
			if m.DimensionExhausted[dim] != n {
				t.Fatalf("dimensions: got %v, want %v", m.DimensionExhausted, want)
			}
		}
	})
	t.Run("placements in the plan use up the node", func(t *testing.T) {
		node := MockNode() // 3900 MHz free, 500 MHz each: 7 fit
		f := newFixture(1, []*structs.Node{node})
		job := simpleJob(10)
		s := f.stack(job)
		placed := 0
		for i := 0; i < 10; i++ {
			if f.place(t, s, job, job.TaskGroups[0], i, nil) != nil {
				placed++
			}
		}
		if placed != 7 {
			t.Fatalf("want 7 placements, got %d", placed)
		}
		if f.ctx.Metrics().DimensionExhausted["cpu"] != 1 {
			t.Fatalf("want cpu exhaustion, got %+v", f.ctx.Metrics())
		}
	})
}

// memory_max reaches the grant only when the cluster allows memory
// oversubscription, as in Nomad; either way placement counts only the
// reserved memory.
func TestMemoryMaxIsGrantedOnlyWithOversubscription(t *testing.T) {
	cases := []struct {
		name    string
		config  *structs.SchedulerConfiguration
		wantMax int64
	}{
		{"no configuration stored means oversubscription is off", nil, 0},
		{"oversubscription off", &structs.SchedulerConfiguration{}, 0},
		{"oversubscription on", &structs.SchedulerConfiguration{MemoryOversubscriptionEnabled: true}, 9000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node := MockNode()
			f := newFixture(1, []*structs.Node{node})
			f.state.config = tc.config
			job := simpleJob(1)
			job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 256
			// More than the node has: only a reservation would not fit.
			job.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = 9000
			option := f.stack(job).Select(job.TaskGroups[0], nil)
			if option == nil {
				t.Fatalf("memory_max must not count against the node: %+v", f.ctx.Metrics())
			}
			task := option.Resources.Tasks[job.TaskGroups[0].Tasks[0].Name]
			if task.Memory.MemoryMB != 256 || task.Memory.MemoryMaxMB != tc.wantMax {
				t.Fatalf("granted memory %d max %d, want 256 max %d", task.Memory.MemoryMB, task.Memory.MemoryMaxMB, tc.wantMax)
			}
		})
	}
}
