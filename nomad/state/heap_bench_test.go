package state

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// The heap benchmarks measure what the store keeps per alloc and per node
// record, the way a server receives them: every object decoded afresh from
// msgpack, as the FSM decodes raft entries, so no two share a string
// unless the store makes them. They report bytes of live heap (after two
// collections) per object, the figure issue 16 sets a target for.

const (
	heapBenchNodes      = 1000
	heapBenchAllocsEach = 4
)

// heapBenchNode is a node as a client registers it: attributes, meta and
// drivers of the shape the node simulator and real clients send.
func heapBenchNode(i int) *structs.Node {
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
	n := &structs.Node{
		ID: id, SecretID: fmt.Sprintf("%08x-1111-4000-8000-%012x", i, i), Name: fmt.Sprintf("sim-%05d", i),
		Datacenter: fmt.Sprintf("dc%d", i%10), NodePool: structs.DefaultNodePool, NodeClass: "sim",
		HTTPAddr: fmt.Sprintf("10.0.%d.%d:4646", i/250, i%250), Status: structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Attributes: structs.NewAttributes(map[string]string{
			"kernel.name": "linux", "kernel.version": "6.1.0", "arch": "x86", "cpu.arch": "amd64",
			"cpu.modelname": "Intel(R) Xeon(R) CPU @ 2.20GHz", "cpu.numcores": "4", "cpu.frequency": "2200",
			"cpu.totalcompute": "8800", "memory.totalbytes": "8589934592", "os.name": "ubuntu",
			"os.version": "22.04", "nomad.version": "1.8.0", "driver.mock_driver": "1",
			"unique.hostname": fmt.Sprintf("sim-%05d", i), "unique.network.ip-address": fmt.Sprintf("10.0.%d.%d", i/250, i%250),
		}),
		Meta: map[string]string{"rack": fmt.Sprintf("r%d", i%50), "zone": fmt.Sprintf("z%d", i%3)},
		Drivers: map[string]*structs.DriverInfo{
			"mock_driver": {Detected: true, Healthy: true, HealthDescription: "Healthy", Attributes: map[string]string{"driver.mock_driver": "1"}},
		},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 8800, TotalCpuCores: 4},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100 * 1024},
		},
	}
	return decoded(n)
}

// heapBenchAlloc is the alloc a plan places: placement metrics with the
// scores of the top five candidates, resources for one task, part of a
// deployment as a service job's allocs are.
func heapBenchAlloc(job *structs.Job, evalID string, i int, nodeID string) *structs.Allocation {
	m := &structs.AllocMetric{NodesEvaluated: 5, NodesInPool: 1000, NodesAvailable: map[string]int{"dc1": 100}}
	for c := range 5 {
		m.ScoreMetaData = append(m.ScoreMetaData, &structs.NodeScoreMeta{
			NodeID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i+c, i+c),
			Scores: structs.NewNodeScores(
				[]string{"binpack", "job-anti-affinity", "node-reschedule-penalty", "node-affinity"},
				[]float64{0.5 + float64(c)/100, 0, 0, 0}),
			NormScore: 0.5,
		})
	}
	a := &structs.Allocation{
		ID: fmt.Sprintf("%08x-2222-4000-8000-%012x", i, i), Namespace: job.Namespace, EvalID: evalID,
		Name: structs.AllocName(job.ID, "web", i), NodeID: nodeID, NodeName: "sim-" + nodeID[:5],
		JobID: job.ID, TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
		DeploymentID: fmt.Sprintf("%08x-4444-4000-8000-%012x", 7, 7),
		AllocatedResources: &structs.AllocatedResources{
			Tasks:  map[string]*structs.AllocatedTaskResources{"web": {Cpu: structs.AllocatedCpuResources{CpuShares: 100}, Memory: structs.AllocatedMemoryResources{MemoryMB: 64}}},
			Shared: structs.AllocatedSharedResources{DiskMB: 150},
		},
		Metrics: m,
	}
	return decoded(a)
}

// heapBenchReport is a client's report: the task running, with the events
// a real task runner records, but without Details (as the node simulator
// sends them).
func heapBenchReport(id string, status string, at time.Time) *structs.Allocation {
	return heapBenchReportDetails(id, status, at, nil)
}

// heapBenchReportDetails is heapBenchReport with each event's Details
// made by details: the task runner gives every event a map, empty for
// these three.
func heapBenchReportDetails(id string, status string, at time.Time, details func() map[string]string) *structs.Allocation {
	if details == nil {
		details = func() map[string]string { return nil }
	}
	ts := &structs.TaskState{State: structs.TaskStateRunning, StartedAt: at, Events: []*structs.TaskEvent{
		{Type: structs.TaskReceived, Time: at.UnixNano(), DisplayMessage: "Task received by client", Details: details()},
		{Type: structs.TaskSetup, Time: at.UnixNano(), Message: "Building Task Directory", DisplayMessage: "Building Task Directory", Details: details()},
		{Type: structs.TaskStarted, Time: at.UnixNano(), DisplayMessage: "Task started by client", Details: details()},
	}}
	if status == structs.AllocClientStatusPending {
		ts.State = structs.TaskStatePending
		ts.Events = ts.Events[:2]
	}
	return decoded(&structs.Allocation{ID: id, ClientStatus: status, TaskStates: map[string]*structs.TaskState{"web": ts}})
}

// decoded returns v as the FSM would see it: encoded and decoded again.
func decoded[T any](v *T) *T {
	b, err := rpcx.Encode(v)
	if err != nil {
		panic(err)
	}
	out := new(T)
	if err := rpcx.Decode(b, out); err != nil {
		panic(err)
	}
	return out
}

// heapProfileDir, if set, names a directory the benchmarks write heap
// profiles to, for `go tool pprof -base`: state-empty and state-registered
// around the nodes' registration, state-nodes and state-allocs around the
// allocs' placement. Profiling samples every 512 bytes then.
var heapProfileDir = os.Getenv("DROVER_STATE_HEAP_PROFILE")

func init() {
	if heapProfileDir != "" {
		runtime.MemProfileRate = 512
	}
}

func writeHeapProfile(b *testing.B, name string) {
	if heapProfileDir == "" {
		return
	}
	liveHeap()
	f, err := os.Create(filepath.Join(heapProfileDir, "state-"+name+".pprof"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkStoreHeapPerNode reports the live heap a node record costs:
// the node, its three index entries, and what its registration left.
func BenchmarkStoreHeapPerNode(b *testing.B) {
	for range b.N {
		s := testStateStore(b)
		writeHeapProfile(b, "empty")
		before := liveHeap()
		for i := range heapBenchNodes {
			if err := s.Write(uint64(10+i), func(tx *Txn) error { return tx.UpsertNode(heapBenchNode(i), nil) }); err != nil {
				b.Fatal(err)
			}
		}
		after := liveHeap()
		writeHeapProfile(b, "registered")
		b.ReportMetric(float64(int64(after)-int64(before))/heapBenchNodes, "B/node")
		runtime.KeepAlive(s)
	}
}

// BenchmarkStoreHeapPerAlloc reports the live heap an alloc costs once
// placed and reported running by its client (a pending report, then a
// running one), with its index entries.
func BenchmarkStoreHeapPerAlloc(b *testing.B) { benchStoreHeapPerAlloc(b, nil) }

// BenchmarkStoreHeapPerAllocTaskRunnerEvents is BenchmarkStoreHeapPerAlloc
// with events as the client's task runner reports them, each with an
// empty Details map.
func BenchmarkStoreHeapPerAllocTaskRunnerEvents(b *testing.B) {
	benchStoreHeapPerAlloc(b, func() map[string]string { return map[string]string{} })
}

func benchStoreHeapPerAlloc(b *testing.B, details func() map[string]string) {
	const n = heapBenchNodes * heapBenchAllocsEach
	for range b.N {
		s := testStateStore(b)
		nodeIDs := make([]string, heapBenchNodes)
		for i := range nodeIDs {
			node := heapBenchNode(i)
			nodeIDs[i] = node.ID
			if err := s.Write(uint64(10+i), func(tx *Txn) error { return tx.UpsertNode(node, nil) }); err != nil {
				b.Fatal(err)
			}
		}
		writeHeapProfile(b, "nodes")
		index := uint64(10 + heapBenchNodes)
		job := testJob("bench-web")
		job.TaskGroups[0].Count = n
		if err := s.Write(index, func(tx *Txn) error { return tx.UpsertJob(job) }); err != nil {
			b.Fatal(err)
		}
		index++
		at := time.Unix(1_700_000_000, 0)
		before := liveHeap()
		const batch = 100
		for start := 0; start < n; start += batch {
			evalID := decoded(&structs.Evaluation{ID: fmt.Sprintf("%08x-3333-4000-8000-%012x", start/1000, start/1000)}).ID
			var allocs, pending, running []*structs.Allocation
			for i := start; i < start+batch; i++ {
				a := heapBenchAlloc(job, evalID, i, nodeIDs[i%heapBenchNodes])
				allocs = append(allocs, a)
				pending = append(pending, heapBenchReportDetails(a.ID, structs.AllocClientStatusPending, at, details))
				running = append(running, heapBenchReportDetails(a.ID, structs.AllocClientStatusRunning, at, details))
			}
			for _, step := range []func() error{
				func() error { return s.Write(index, func(tx *Txn) error { return tx.UpsertAllocs(allocs) }) },
				func() error {
					return s.Write(index+1, func(tx *Txn) error { return tx.UpdateAllocsFromClient(pending) })
				},
				func() error {
					return s.Write(index+2, func(tx *Txn) error { return tx.UpdateAllocsFromClient(running) })
				},
			} {
				if err := step(); err != nil {
					b.Fatal(err)
				}
			}
			index += 3
		}
		after := liveHeap()
		writeHeapProfile(b, "allocs")
		b.ReportMetric(float64(int64(after)-int64(before))/n, "B/alloc")
		runtime.KeepAlive(s)
	}
}
