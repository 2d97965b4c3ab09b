package nomad

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func testFSM(t *testing.T) *fsm.FSM {
	t.Helper()
	f, err := fsm.New(hclog.NewNullLogger(), nil)
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

func (l *fsmLog) applyTo(t *testing.T, f *fsm.FSM) {
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

// atomicSetupLog writes node n1 with job web's alloc a1 running on it, at
// indexes 1 to 4.
func atomicSetupLog(t *testing.T) (*fsmLog, *structs.Job) {
	l := &fsmLog{t: t}
	job := fsmTestJob("web")
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n1")})
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: evalFor("e1", job, structs.EvalStatusComplete)})
	l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{fsmTestAlloc("a1", "n1", job, "e1")}, Job: job, UpdatedAt: 1})
	l.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: 2})
	return l, job
}

// entryAt encodes one entry at a raft index.
func entryAt(t *testing.T, index uint64, mt structs.MessageType, msg any) *raft.Log {
	t.Helper()
	buf, err := raftlog.Encode(mt, msg)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: buf}
}

// buildLog writes one entry of every message type, in an order that makes
// each meaningful (the alloc exists before the client reports on it).
func buildLog(t testing.TB) *fsmLog {
	l := &fsmLog{t: t}
	ts := time.Unix(1700000000, 0).UTC()
	job := fsmTestJob("web")
	job2 := fsmTestJob("batchy")
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n1")})
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n2")})
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n3")})
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: evalFor("e1", job, structs.EvalStatusPending)})
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job2, Eval: evalFor("e2", job2, structs.EvalStatusPending)})
	l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{fsmTestAlloc("a1", "n1", job, "e1"), fsmTestAlloc("a2", "n2", job2, "e2")},
		Job:           job, EvalID: "e1", UpdatedAt: ts.UnixNano(),
		Deployment: &structs.Deployment{ID: "d1", Namespace: "default", JobID: job.ID, Status: structs.DeploymentStatusRunning,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1}}, CreateTime: ts.UnixNano()},
	})
	done := evalFor("e1", job, structs.EvalStatusComplete)
	l.add(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}})
	l.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{
		Alloc:     []*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusRunning, TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning, StartedAt: ts}}}},
		UpdatedAt: ts.UnixNano(),
	})
	// Native service registrations (issue 13, services).
	l.add(structs.ServiceRegistrationUpsertRequestType, &structs.ServiceRegistrationUpsertRequest{Services: []*structs.ServiceRegistration{
		{ID: "_nomad-task-a1-t-web-http", ServiceName: "web", AllocID: "a1", Address: "10.0.0.1", Port: 8080},
		{ID: "_nomad-task-a1-t-web-admin", ServiceName: "web-admin", AllocID: "a1", Address: "10.0.0.1", Port: 8081},
	}})
	l.add(structs.ServiceRegistrationDeleteRequestType, &structs.ServiceRegistrationDeleteRequest{IDs: []string{"_nomad-task-a1-t-web-admin"}})
	l.add(structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: "n2", Status: structs.NodeStatusDown, UpdatedAt: ts.UnixNano(),
		NodeEvent: &structs.NodeEvent{Message: "Node heartbeat missed", Timestamp: ts},
		Evals:     []*structs.Evaluation{evalFor("e3", job2, structs.EvalStatusPending)}})
	l.add(structs.NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{NodeID: "n3", DrainStrategy: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}, StartedAt: ts}, UpdatedAt: ts.Unix()})
	l.add(structs.NodeUpdateDrainRequestType, &structs.NodeUpdateDrainRequest{NodeID: "n3", MarkEligible: true, UpdatedAt: ts.Unix()})
	l.add(structs.NodeUpdateEligibilityRequestType, &structs.NodeUpdateEligibilityRequest{NodeID: "n3", Eligibility: structs.NodeSchedulingIneligible, UpdatedAt: ts.Unix()})
	l.add(structs.AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{
		Allocs: map[string]*structs.DesiredTransition{"a1": {Migrate: structs.BoolPtr(true)}},
		Evals:  []*structs.Evaluation{evalFor("e4", job, structs.EvalStatusPending)}})
	l.add(structs.AllocStopRequestType, &structs.AllocStopRequest{AllocID: "a1", Eval: evalFor("e5", job, structs.EvalStatusPending)})
	canary := fsmTestAlloc("a3", "n1", job, "e1")
	canary.Name, canary.DeploymentID = structs.AllocName(job.ID, "web", 1), "d2"
	canary.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{
		AllocsUpdated: []*structs.Allocation{canary}, Job: job, EvalID: "e1", UpdatedAt: ts.UnixNano(),
		Deployment: &structs.Deployment{ID: "d2", Namespace: "default", JobID: job.ID, Status: structs.DeploymentStatusRunning,
			TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 1, DesiredCanaries: 1}}},
	})
	l.add(structs.DeploymentAllocHealthRequestType, &structs.ApplyDeploymentAllocHealthRequest{
		DeploymentAllocHealthRequest: structs.DeploymentAllocHealthRequest{DeploymentID: "d2", HealthyAllocationIDs: []string{"a3"}},
		Timestamp:                    ts.UnixNano()})
	l.add(structs.DeploymentPromoteRequestType, &structs.DeploymentPromoteRequest{DeploymentID: "d2", All: true, UpdatedAt: ts.UnixNano()})
	l.add(structs.DeploymentStatusUpdateRequestType, &structs.DeploymentStatusUpdateRequest{DeploymentUpdate: &structs.DeploymentStatusUpdate{DeploymentID: "d1", Status: structs.DeploymentStatusFailed}})
	l.add(structs.DeploymentDeleteRequestType, &structs.DeploymentDeleteRequest{Deployments: []string{}})
	l.add(structs.JobScaleRequestType, &structs.JobScaleApplyRequest{Namespace: "default", JobID: "web", Group: "web",
		Event: &structs.ScalingEvent{Time: ts.UnixNano(), Message: "checked"}})
	l.add(structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread}})
	l.add(structs.JobStabilityRequestType, &structs.JobStabilityRequest{JobID: "web", JobVersion: 0, Stable: true, WriteRequest: structs.WriteRequest{Namespace: "default"}})
	l.add(structs.GenericWriteRequestType, &structs.GenericWriteRequest{Key: "k", Value: "v"})
	param := fsmTestJob("encode")
	param.Type, param.ParameterizedJob = structs.JobTypeBatch, &structs.ParameterizedJobConfig{Payload: structs.DispatchPayloadOptional}
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: param})
	child := deriveDispatchedChild(param, &structs.JobDispatchRequest{Payload: []byte("in")}, ts, "0a1b2c3d")
	l.add(structs.JobDispatchRequestType, &structs.JobDispatchApplyRequest{Job: child, Eval: evalFor("e6", child, structs.EvalStatusPending)})
	addACLEntries(l, ts)
	l.add(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: []string{"e1"}})
	l.add(structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: "web", SubmitTime: ts.UnixNano(), WriteRequest: structs.WriteRequest{Namespace: "default"}})
	l.add(structs.JobBatchDeregisterRequestType, &structs.JobBatchDeregisterRequest{
		Jobs: map[structs.NamespacedID]*structs.JobDeregisterOptions{{ID: "batchy", Namespace: "default"}: {Purge: true}}})
	l.add(structs.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeID: "n3"})
	l.add(structs.NodeBatchDeregisterRequestType, &structs.NodeBatchDeregisterRequest{NodeIDs: []string{"n2"}})
	// Node-down batching (issue 16, storm).
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n4")})
	n4Index := uint64(len(l.entries)) // the register's raft index is n4's ModifyIndex
	l.add(structs.NodeBatchUpdateStatusRequestType, &structs.NodeBatchUpdateStatusRequest{Updates: []*structs.NodeUpdateStatusRequest{
		{NodeID: "n4", Status: structs.NodeStatusDown, UpdatedAt: ts.Unix()}}, NodeModifyIndexes: map[string]uint64{"n4": n4Index}})
	return l
}

func TestFSMAppliesEveryMessageType(t *testing.T) {
	l := buildLog(t)
	seen := map[structs.MessageType]bool{}
	for _, e := range l.entries {
		seen[structs.MessageType(e.Data[0])] = true
	}
	for _, mt := range structs.AllMessageTypes() {
		if !seen[mt] {
			t.Errorf("the test log has no %s entry", mt)
		}
	}
	f := testFSM(t)
	l.applyTo(t, f)
	st := f.State()

	if n, _ := st.NodeByID(nil, "n1"); n == nil || n.Status != structs.NodeStatusReady {
		t.Fatalf("node n1 missing or not ready: %+v", n)
	}
	for _, gone := range []string{"n2", "n3"} {
		if n, _ := st.NodeByID(nil, gone); n != nil {
			t.Fatalf("node %s should be deregistered", gone)
		}
	}
	job, _ := st.JobByID(nil, "default", "web")
	if job == nil || !job.Stop {
		t.Fatalf("job web must be stopped, got %+v", job)
	}
	if j, _ := st.JobByID(nil, "default", "batchy"); j != nil {
		t.Fatal("job batchy must be purged")
	}
	a1, _ := st.AllocByID(nil, "a1")
	if a1 == nil || a1.ClientStatus != structs.AllocClientStatusRunning || !a1.DesiredTransition.ShouldMigrate() {
		t.Fatalf("alloc a1 wrong: %+v", a1)
	}
	// Purging a job never deletes its allocations (promise 2).
	if a2, _ := st.AllocByID(nil, "a2"); a2 == nil {
		t.Fatal("purging a job must not delete its allocations")
	}
	if e, _ := st.EvalByID(nil, "e1"); e != nil {
		t.Fatal("eval e1 must be deleted")
	}
	for _, id := range []string{"e3", "e4", "e5"} {
		if e, _ := st.EvalByID(nil, id); e == nil {
			t.Fatalf("eval %s missing", id)
		}
	}
	if d, _ := st.DeploymentByID(nil, "d1"); d == nil || d.Status != structs.DeploymentStatusFailed {
		t.Fatalf("deployment d1 must be failed, got %+v", d)
	}
	if v, ok, _ := st.KVGet(nil, "k"); !ok || v != "v" {
		t.Fatal("generic write missing")
	}
	if _, cfg, _ := st.SchedulerConfig(); cfg.EffectiveAlgorithm() != structs.SchedulerAlgorithmSpread {
		t.Fatal("scheduler config not applied")
	}
	checkACLEntries(t, st)
	if idx, _ := st.LatestIndex(); idx != uint64(len(l.entries)) {
		t.Fatalf("latest index %d, want %d", idx, len(l.entries))
	}
}

func TestFSMRefusesAnInvalidClientTransition(t *testing.T) {
	l := buildLog(t)
	f := testFSM(t)
	l.applyTo(t, f)
	bad := &fsmLog{t: t, entries: nil}
	bad.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusPending}}})
	bad.entries[0].Index = 1000
	resp := f.Apply(bad.entries[0])
	if err, ok := resp.(error); !ok || err == nil {
		t.Fatalf("running -> pending from a client must be refused, got %v", resp)
	}
	if a1, _ := f.State().AllocByID(nil, "a1"); a1.ClientStatus != structs.AllocClientStatusRunning {
		t.Fatal("a refused entry must change nothing")
	}
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

func TestFSMReplayIsDeterministic(t *testing.T) {
	l := buildLog(t)
	a, b := testFSM(t), testFSM(t)
	l.applyTo(t, a)
	l.applyTo(t, b)
	da, db := dumpState(t, a.State()), dumpState(t, b.State())
	if !structs.DeepEqual(da, db) {
		t.Fatal("two FSMs fed the same log differ")
	}
}

type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (m *memSink) ID() string    { return "mem" }
func (m *memSink) Cancel() error { m.cancelled = true; return nil }
func (m *memSink) Close() error  { return nil }

func TestFSMSnapshotRestoreRoundTrip(t *testing.T) {
	l := buildLog(t)
	// Stop before the deregistrations so the snapshot has every table full.
	l.entries = l.entries[:len(l.entries)-4]
	f := testFSM(t)
	l.applyTo(t, f)

	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()

	restored := testFSM(t)
	oldState := restored.State()
	if err := restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))); err != nil {
		t.Fatal(err)
	}
	select {
	case <-oldState.AbandonCh():
	default:
		t.Fatal("restore must abandon the previous state store so blocking queries re-run")
	}
	want, got := dumpState(t, f.State()), dumpState(t, restored.State())
	for table := range want {
		if len(want[table]) != len(got[table]) {
			t.Errorf("table %s: %d objects restored, want %d", table, len(got[table]), len(want[table]))
		}
	}
	if !structs.DeepEqual(want, got) {
		t.Fatal("restored state differs from the snapshotted state")
	}

	if err := restored.Restore(io.NopCloser(bytes.NewReader([]byte{0xc1, 0x00}))); err == nil {
		t.Fatal("a corrupt snapshot must be refused")
	}
}

// The endpoint checks a client's report on a read; the FSM checks again at
// apply time, because the node may have been marked disconnected and the
// alloc unknown in between.
func TestFSMClientReportChecksTheNodeAtApplyTime(t *testing.T) {
	build := func() (*fsmLog, *structs.Allocation) {
		l := &fsmLog{t: t}
		job := fsmTestJob("web")
		l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n1")})
		l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: evalFor("e1", job, structs.EvalStatusPending)})
		a := fsmTestAlloc("a1", "n1", job, "e1")
		l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{a}, Job: job, UpdatedAt: 1})
		l.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: 2})
		return l, a
	}
	l, a := build()
	f := testFSM(t)
	l.applyTo(t, f)

	// The node is marked disconnected and the alloc unknown...
	unknown := a.Copy()
	unknown.ClientStatus = structs.AllocClientStatusUnknown
	unknown.AppendState(structs.AllocStateFieldClientStatus, structs.AllocClientStatusUnknown, time.Unix(100, 0))
	more := &fsmLog{t: t, entries: nil}
	more.add(structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: "n1", Status: structs.NodeStatusDisconnected, UpdatedAt: 100})
	more.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{unknown}, UpdatedAt: 100})
	// ...then a report the endpoint accepted earlier applies: refused.
	more.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: 101})
	for i, e := range more.entries {
		e.Index = uint64(100 + i)
	}
	f.Apply(more.entries[0])
	f.Apply(more.entries[1])
	resp := f.Apply(more.entries[2])
	if err, ok := resp.(error); !ok || !strings.Contains(err.Error(), structs.ErrNodeNotReady.Error()) {
		t.Fatalf("a report applied while the node is disconnected must be refused as not ready, got %v", resp)
	}
	if got, _ := f.State().AllocByID(nil, "a1"); got.ClientStatus != structs.AllocClientStatusUnknown {
		t.Fatalf("a refused report changed the alloc to %s", got.ClientStatus)
	}

	// The node heartbeats; the report arrives without an eval (the
	// endpoint read the alloc before it was unknown): the FSM adds the
	// reconnect eval, with an ID every server derives the same way.
	reconnect := func(f *fsm.FSM) *structs.Evaluation {
		tail := &fsmLog{t: t}
		tail.add(structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: "n1", Status: structs.NodeStatusReady, UpdatedAt: 200})
		tail.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: 201})
		for i, e := range tail.entries {
			e.Index = uint64(200 + i)
			if resp := f.Apply(e); resp != nil {
				t.Fatalf("entry %d: %v", i, resp)
			}
		}
		evals, _ := f.State().EvalsByJob(nil, "default", "web")
		for _, e := range evals {
			if e.TriggeredBy == structs.EvalTriggerReconnect {
				return e
			}
		}
		t.Fatal("no reconnect eval was created")
		return nil
	}
	e1 := reconnect(f)
	other := testFSM(t)
	l.applyTo(t, other)
	other.Apply(more.entries[0])
	other.Apply(more.entries[1])
	other.Apply(more.entries[2])
	if e2 := reconnect(other); e1.ID != e2.ID || e1.CreateTime != e2.CreateTime {
		t.Fatalf("servers derived different reconnect evals: %s vs %s", e1.ID, e2.ID)
	}
}
