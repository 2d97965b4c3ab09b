package fsm

import (
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// The fixtures of the FSM's own tests. They are copies of those the
// server's tests (nomad/fsm_test.go) build on, which stay there because
// most of the server's tests share them; the few tests here need the
// FSM's unexported parts.

func testFSM(t *testing.T) *FSM {
	t.Helper()
	f, err := New(hclog.NewNullLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fsmLog builds raft log entries with increasing indexes.
type fsmLog struct {
	t       testing.TB
	entries []*raft.Log
}

func (l *fsmLog) add(mt structs.MessageType, msg any) {
	l.t.Helper()
	buf, err := raftlog.Encode(mt, msg)
	if err != nil {
		l.t.Fatal(err)
	}
	l.entries = append(l.entries, &raft.Log{Index: uint64(len(l.entries) + 1), Type: raft.LogCommand, Data: buf})
}

func (l *fsmLog) applyTo(t *testing.T, f *FSM) {
	t.Helper()
	for _, e := range l.entries {
		if resp := f.Apply(e); resp != nil {
			if err, ok := resp.(error); ok {
				t.Fatalf("entry %d (%s) failed: %v", e.Index, structs.MessageType(e.Data[0]), err)
			}
		}
	}
}

func fsmTestNode(id string) *structs.Node {
	n := &structs.Node{
		ID: id, SecretID: id + "-secret", Name: id, Datacenter: "dc1", Status: structs.NodeStatusReady,
		Attributes:    structs.NewAttributes(map[string]string{"kernel.name": "linux", "unique.network.ip-address": "127.0.0.1"}),
		NodeResources: &structs.NodeResources{Cpu: structs.NodeCpuResources{CpuShares: 4000}, Memory: structs.NodeMemoryResources{MemoryMB: 8192}, Disk: structs.NodeDiskResources{DiskMB: 10000}},
		Drivers:       map[string]*structs.DriverInfo{"raw_exec": {Detected: true, Healthy: true}},
	}
	n.Canonicalize()
	return n
}

func fsmTestJob(id string) *structs.Job {
	j := &structs.Job{ID: id, Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
		Name: "web", Count: 1,
		Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", Config: map[string]any{"command": "/bin/sleep", "args": []any{"60"}},
			Resources: &structs.Resources{CPU: 100, MemoryMB: 64}}},
	}}}
	j.Canonicalize()
	return j
}

func fsmTestAlloc(id, nodeID string, job *structs.Job, evalID string) *structs.Allocation {
	return &structs.Allocation{
		ID: id, Namespace: job.Namespace, EvalID: evalID, Name: structs.AllocName(job.ID, "web", 0), NodeID: nodeID,
		JobID: job.ID, Job: job, TaskGroup: "web", DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
		AllocatedResources: structs.AllocatedResourcesFor(job.TaskGroups[0], nil),
		CreateTime:         1000, ModifyTime: 1000,
	}
}

func evalFor(id string, job *structs.Job, status string) *structs.Evaluation {
	return &structs.Evaluation{ID: id, Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: status, CreateTime: 1000, ModifyTime: 1000}
}

// dumpState reads every table of a store into comparable form.
func dumpState(t *testing.T, st *state.StateStore) map[string][]any {
	t.Helper()
	out := map[string][]any{}
	iters := map[string]func(memdb.WatchSet) (memdb.ResultIterator, error){
		"nodes": st.Nodes, "jobs": st.Jobs, "versions": st.JobVersions, "summaries": st.JobSummaries,
		"evals": st.Evals, "allocs": st.Allocs, "deployments": st.Deployments, "kv": st.KVs, "scaling": st.ScalingEvents,
		"acl_policies": st.ACLPolicies, "acl_tokens": st.ACLTokens, "server_secret": st.ServerSecrets,
		"index": func(memdb.WatchSet) (memdb.ResultIterator, error) { return st.Indexes() },
		// Native service registrations (issue 13, services).
		"service_registrations": st.ServiceRegistrations,
	}
	for name, iter := range iters {
		it, err := iter(nil)
		if err != nil {
			t.Fatal(err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			out[name] = append(out[name], raw)
		}
	}
	_, cfg, err := st.SchedulerConfig()
	if err != nil {
		t.Fatal(err)
	}
	out["config"] = []any{cfg}
	return out
}
