package client

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/drover-sched/drover/client/clienttest"
	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad/nomadtest"
	"github.com/drover-sched/drover/structs"
)

// serverUnderTest is what the conformance scenario needs of a server: the
// client's way in, and the operator's side (assign work, stop it, read
// what the server stored).
type serverUnderTest struct {
	connect func(cfg *config.Config)
	node    func(id string) *structs.Node
	place   func(t *testing.T, nodeID string, job *structs.Job) string
	stop    func(t *testing.T, job *structs.Job, allocID string)
	alloc   func(id string) *structs.Allocation
	// call makes one RPC as a (possibly misbehaving) client would.
	call func(ctx context.Context, method string, args, reply any) error
}

// fakeUnderTest is clienttest.FakeServer, driven the way the client's own
// tests drive it.
func fakeUnderTest() serverUnderTest {
	fs := clienttest.NewFakeServer(0)
	return serverUnderTest{
		connect: func(cfg *config.Config) { cfg.RPC = fs },
		node:    fs.Node,
		place: func(_ *testing.T, nodeID string, job *structs.Job) string {
			return fs.UpsertAlloc(allocFor(nodeID, job)).ID
		},
		stop:  func(_ *testing.T, _ *structs.Job, id string) { fs.StopAlloc(id) },
		alloc: fs.Alloc,
		call:  fs.RPC,
	}
}

// realUnderTest is a real in-process server, reached over its RPC port:
// work is assigned by registering the job (the scheduler places it) and
// stopped by deregistering it.
func realUnderTest(t *testing.T) serverUnderTest {
	s := nomadtest.Server(t, nil)
	nomadtest.WaitForLeader(t, 10*time.Second, s)
	write := structs.WriteRequest{Region: structs.DefaultRegion, Namespace: structs.DefaultNamespace}
	allocOf := func(id string) *structs.Allocation {
		a, _ := s.State().AllocByID(nil, id)
		return a
	}
	return serverUnderTest{
		connect: func(cfg *config.Config) { cfg.Servers = []string{s.RPCAddr()} },
		node: func(id string) *structs.Node {
			n, _ := s.State().NodeByID(nil, id)
			return n
		},
		place: func(t *testing.T, _ string, job *structs.Job) string {
			t.Helper()
			if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: write}, &structs.JobRegisterResponse{}); err != nil {
				t.Fatalf("registering %s: %v", job.ID, err)
			}
			var id string
			wait.For(t, 20*time.Second, func() (bool, string) {
				allocs, _ := s.State().AllocsByJob(nil, job.Namespace, job.ID, true)
				if len(allocs) != 1 {
					return false, fmt.Sprintf("%d allocs of %s placed, want 1", len(allocs), job.ID)
				}
				id = allocs[0].ID
				return true, ""
			})
			return id
		},
		stop: func(t *testing.T, job *structs.Job, _ string) {
			t.Helper()
			if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: job.ID, WriteRequest: write}, &structs.JobDeregisterResponse{}); err != nil {
				t.Fatalf("deregistering %s: %v", job.ID, err)
			}
		},
		alloc: allocOf,
		call:  s.RPCContext,
	}
}

// conformanceOutcome is what a client scenario leaves on the server, in
// the terms both servers share.
type conformanceOutcome struct {
	NodeStatus    string
	Running       string // the alloc's client status once it started
	Stopped       string // ... and once the server stopped it
	DesiredStatus string
	TaskState     string
	TaskFailed    bool
	Killed        int // TaskKilled events
	// Refusals are the errors of calls made with another node's secret.
	Refusals []string
}

// runConformanceScenario registers a client, assigns it one service alloc,
// waits for it to run, stops it from the server's side and waits for the
// client to report it complete.
func runConformanceScenario(t *testing.T, srv serverUnderTest) conformanceOutcome {
	c := testClient(t, srv.connect)
	nodeReady := func() bool { n := srv.node(c.NodeID()); return n != nil && n.Status == structs.NodeStatusReady }
	wait.Until(t, 20*time.Second, "the node to register", nodeReady)

	j := job(structs.JobTypeService, mockTask(map[string]any{}))
	j.Region, j.Priority, j.Datacenters = structs.DefaultRegion, structs.JobDefaultPriority, []string{"dc1"}
	j.TaskGroups[0].Tasks[0].Resources = &structs.Resources{CPU: 100, MemoryMB: 64}
	j.Canonicalize()
	id := srv.place(t, c.NodeID(), j)

	var out conformanceOutcome
	statusIs := func(want string) func() bool {
		return func() bool { a := srv.alloc(id); return a != nil && a.ClientStatus == want }
	}
	wait.Until(t, 20*time.Second, "the alloc to run", statusIs(structs.AllocClientStatusRunning))
	out.NodeStatus = srv.node(c.NodeID()).Status
	out.Running = srv.alloc(id).ClientStatus

	srv.stop(t, j, id)
	wait.Until(t, 20*time.Second, "the stopped alloc to complete", statusIs(structs.AllocClientStatusComplete))
	a := srv.alloc(id)
	out.Stopped, out.DesiredStatus = a.ClientStatus, a.DesiredStatus
	if ts := a.TaskStates["web"]; ts != nil {
		out.TaskState, out.TaskFailed, out.Killed = ts.State, ts.Failed, countEvents(ts, structs.TaskKilled)
	}

	// Calls a node makes with the wrong secret are refused the same way.
	ctx := context.Background()
	other := structs.GenerateUUID()
	refusals := []struct {
		method      string
		args, reply any
	}{
		{"Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: c.NodeID(), SecretID: other, Status: structs.NodeStatusReady}, &structs.NodeUpdateResponse{}},
		{"Node.GetClientAllocs", &structs.NodeSpecificRequest{NodeID: c.NodeID(), SecretID: other}, &structs.NodeClientAllocsResponse{}},
		{"Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: []string{id}, NodeID: c.NodeID(), SecretID: other}, &structs.AllocsGetResponse{}},
		{"Node.UpdateAlloc", &structs.AllocUpdateRequest{NodeID: c.NodeID(), SecretID: other,
			Alloc: []*structs.Allocation{{ID: id, ClientStatus: structs.AllocClientStatusFailed}}}, &structs.GenericResponse{}},
	}
	for _, r := range refusals {
		err := srv.call(ctx, r.method, r.args, r.reply)
		if err == nil {
			t.Fatalf("%s with another secret was accepted", r.method)
		}
		// Node IDs differ between runs; the rest of the text must not.
		out.Refusals = append(out.Refusals, r.method+": "+strings.ReplaceAll(err.Error(), c.NodeID(), "<node>"))
	}
	if got := srv.alloc(id).ClientStatus; got != structs.AllocClientStatusComplete {
		t.Fatalf("a refused update changed the alloc to %s", got)
	}
	return out
}

// The client's tests run against clienttest.FakeServer; this test keeps the
// fake honest by running one scenario against it and against a real
// in-process server, and requiring the same outcome from both.
func TestFakeServerBehavesLikeTheRealServer(t *testing.T) {
	onFake := runConformanceScenario(t, fakeUnderTest())
	onReal := runConformanceScenario(t, realUnderTest(t))
	want := conformanceOutcome{
		NodeStatus: structs.NodeStatusReady, Running: structs.AllocClientStatusRunning,
		Stopped: structs.AllocClientStatusComplete, DesiredStatus: structs.AllocDesiredStatusStop,
		TaskState: structs.TaskStateDead, Killed: 1,
	}
	if diff := cmp.Diff(want, onReal, cmpopts.IgnoreFields(conformanceOutcome{}, "Refusals")); diff != "" {
		t.Fatalf("the real server's outcome is not the expected one (-want +real):\n%s", diff)
	}
	if diff := cmp.Diff(onReal, onFake); diff != "" {
		t.Fatalf("the fake server differs from the real one (-real +fake):\n%s", diff)
	}
}
