package clientreport

import (
	"errors"
	"reflect"
	"testing"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// fakeState is the three reads Decide makes, from maps.
type fakeState struct {
	allocs map[string]*structs.Allocation
	nodes  map[string]*structs.Node
	jobs   map[string]*structs.Job
}

func (f *fakeState) AllocByID(_ memdb.WatchSet, id string) (*structs.Allocation, error) {
	return f.allocs[id], nil
}
func (f *fakeState) NodeByID(_ memdb.WatchSet, id string) (*structs.Node, error) {
	return f.nodes[id], nil
}
func (f *fakeState) JobByID(_ memdb.WatchSet, ns, id string) (*structs.Job, error) {
	return f.jobs[ns+"/"+id], nil
}

// world is one ready node running allocs of a service job and a batch job.
type world struct {
	st              *fakeState
	node            *structs.Node
	service, batch  *structs.Job
	svcA, svcB, bat *structs.Allocation
}

func newWorld() *world {
	w := &world{st: &fakeState{allocs: map[string]*structs.Allocation{}, nodes: map[string]*structs.Node{}, jobs: map[string]*structs.Job{}}}
	w.node = feasible.MockNode()
	w.node.Status = structs.NodeStatusReady
	w.st.nodes[w.node.ID] = w.node
	w.service = feasible.MockJob()
	w.service.ID, w.service.Type = "service-job", structs.JobTypeService
	w.batch = feasible.MockJob()
	w.batch.ID, w.batch.Type, w.batch.Priority = "batch-job", structs.JobTypeBatch, 70
	for _, j := range []*structs.Job{w.service, w.batch} {
		w.st.jobs[j.Namespace+"/"+j.ID] = j
	}
	mk := func(job *structs.Job, idx int) *structs.Allocation {
		a := feasible.MockAllocFor(job, job.TaskGroups[0], w.node, idx)
		a.ClientStatus = structs.AllocClientStatusRunning
		a.AllocModifyIndex = 10
		w.st.allocs[a.ID] = a
		return a
	}
	w.svcA, w.svcB, w.bat = mk(w.service, 0), mk(w.service, 1), mk(w.batch, 0)
	return w
}

func report(a *structs.Allocation, status string) *structs.Allocation {
	return &structs.Allocation{ID: a.ID, NodeID: a.NodeID, ClientStatus: status, AllocModifyIndex: a.AllocModifyIndex}
}

func triggers(d Decision) map[string]string {
	out := map[string]string{}
	for _, e := range d.Evals {
		out[e.JobID] = e.TriggeredBy
	}
	return out
}

func TestEachReportTriggersWhatItsChangeNeeds(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reports func(w *world) []*structs.Allocation
		setup   func(w *world)
		updates int
		want    map[string]string // job ID -> trigger
		freed   bool
	}{
		{name: "running is news, no evaluation", updates: 1, want: map[string]string{},
			reports: func(w *world) []*structs.Allocation { return []*structs.Allocation{report(w.svcA, "running")} }},
		{name: "two failures of one job make one evaluation", updates: 2, freed: true,
			want: map[string]string{"service-job": structs.EvalTriggerRetryFailedAlloc},
			reports: func(w *world) []*structs.Allocation {
				return []*structs.Allocation{report(w.svcA, "failed"), report(w.svcB, "failed")}
			}},
		{name: "a service alloc finished while wanted", updates: 1, freed: true,
			want:    map[string]string{"service-job": structs.EvalTriggerAllocStop},
			reports: func(w *world) []*structs.Allocation { return []*structs.Allocation{report(w.svcA, "complete")} }},
		{name: "finished batch work needs nothing", updates: 1, freed: true, want: map[string]string{},
			reports: func(w *world) []*structs.Allocation { return []*structs.Allocation{report(w.bat, "complete")} }},
		{name: "a failure the servers stopped already needs nothing", updates: 1, freed: true, want: map[string]string{},
			setup:   func(w *world) { w.svcA.DesiredStatus = structs.AllocDesiredStatusStop },
			reports: func(w *world) []*structs.Allocation { return []*structs.Allocation{report(w.svcA, "failed")} }},
		{name: "back from unknown: a reconnect", updates: 1,
			want: map[string]string{"service-job": structs.EvalTriggerReconnect},
			setup: func(w *world) {
				w.svcA.ClientStatus = structs.AllocClientStatusUnknown
				w.svcA.AllocStates = []*structs.AllocState{{Field: structs.AllocStateFieldClientStatus, Value: "unknown"}}
			},
			reports: func(w *world) []*structs.Allocation { return []*structs.Allocation{report(w.svcA, "running")} }},
		{name: "collected, finished and stale reports are dropped", updates: 0, want: map[string]string{},
			setup: func(w *world) {
				w.svcB.ClientStatus = structs.AllocClientStatusComplete
				w.bat.AllocModifyIndex = 20
			},
			reports: func(w *world) []*structs.Allocation {
				return []*structs.Allocation{
					{ID: "collected", ClientStatus: "running"},
					report(w.svcB, "failed"),
					{ID: w.bat.ID, ClientStatus: "running", AllocModifyIndex: 10},
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			if tc.setup != nil {
				tc.setup(w)
			}
			d, err := Decide(Input{State: w.st, Reports: tc.reports(w), UpdatedAt: 77, Index: 100})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Updates) != tc.updates {
				t.Errorf("%d updates, want %d: %+v", len(d.Updates), tc.updates, d.Updates)
			}
			for _, u := range d.Updates {
				if u.ModifyTime != 77 {
					t.Errorf("update %s has ModifyTime %d, want the entry's 77", u.ID, u.ModifyTime)
				}
			}
			if got := triggers(d); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("evaluations %v, want %v", got, tc.want)
			}
			for _, e := range d.Evals {
				if e.CreateTime != 77 || e.Status != structs.EvalStatusPending || e.NodeID != w.node.ID || e.Priority != w.service.Priority {
					t.Errorf("evaluation %+v: want pending, created at 77, on the node, at the job's priority", e)
				}
			}
			if freed := len(d.Freed) == 1 && d.Freed[0].ID == w.node.ID; freed != tc.freed || len(d.Freed) > 1 {
				t.Errorf("freed %v, want the node once: %v", d.Freed, tc.freed)
			}
		})
	}
}

// A node that is not ready gets nothing written: its reports wait for
// its heartbeat.
func TestANodeNotReadyHasTheWholeBatchRefused(t *testing.T) {
	w := newWorld()
	w.node.Status = structs.NodeStatusDisconnected
	d, err := Decide(Input{State: w.st, Reports: []*structs.Allocation{report(w.svcA, "failed")}, Index: 5})
	if !errors.Is(err, structs.ErrNodeNotReady) {
		t.Fatalf("err %v, want ErrNodeNotReady", err)
	}
	if len(d.Updates)+len(d.Evals)+len(d.Freed) != 0 {
		t.Errorf("decision %+v, want nothing", d)
	}
}

// A transition no client may make refuses the entry whole, as the state
// store would.
func TestAnImpossibleTransitionRefusesTheEntry(t *testing.T) {
	w := newWorld()
	d, err := Decide(Input{State: w.st, Index: 5, Reports: []*structs.Allocation{
		report(w.svcB, "failed"), report(w.svcA, "pending"),
	}})
	if err == nil || len(d.Updates)+len(d.Evals) != 0 {
		t.Fatalf("running -> pending: decision %+v, err %v; want refused, nothing written", d, err)
	}
}

// Every server applying one entry decides the same, evaluation IDs
// included; another entry's IDs differ.
func TestTheDecisionIsTheSameOnEveryServer(t *testing.T) {
	in := func(w *world, index uint64) Input {
		return Input{State: w.st, Index: index, UpdatedAt: 9, Reports: []*structs.Allocation{
			report(w.svcA, "failed"), report(w.bat, "failed"),
		}}
	}
	w := newWorld()
	a, err := Decide(in(w, 42))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Decide(in(w, 42))
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two applies of one entry differ:\n%+v\n%+v", a, b)
	}
	if len(a.Evals) != 2 || a.Evals[0].JobID > a.Evals[1].JobID {
		t.Fatalf("want one evaluation per job in job order: %+v", a.Evals)
	}
	c, _ := Decide(in(w, 43))
	if c.Evals[0].ID == a.Evals[0].ID || a.Evals[0].ID == a.Evals[1].ID {
		t.Errorf("evaluation IDs must differ across entries and jobs: %s %s %s", a.Evals[0].ID, a.Evals[1].ID, c.Evals[0].ID)
	}
}

// An entry written by a server that built the evaluations in its endpoint
// keeps them, and gets no second one for the same job.
func TestEvaluationsInTheEntryAreKeptAndNotDoubled(t *testing.T) {
	w := newWorld()
	old := &structs.Evaluation{ID: "from-the-entry", Namespace: w.service.Namespace, JobID: w.service.ID,
		TriggeredBy: structs.EvalTriggerRetryFailedAlloc, Status: structs.EvalStatusPending}
	d, err := Decide(Input{State: w.st, Index: 3, Evals: []*structs.Evaluation{old},
		Reports: []*structs.Allocation{report(w.svcA, "failed"), report(w.bat, "failed")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Evals) != 2 || d.Evals[0] != old || d.Evals[1].JobID != w.batch.ID {
		t.Errorf("evaluations %+v: want the entry's for the service job, one new for the batch job", d.Evals)
	}
}
