package reconciler

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// systemWorld is a system (or sysbatch) job with ready nodes n1..nN.
func systemWorld(typ string, n int) *world {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("n%d", i+1)
	}
	j := testJob(typ, 1)
	return newWorld(j, ids...)
}

func (w *world) system() *Result {
	in := w.input()
	eligible := map[string]*structs.Node{}
	for id, n := range w.nodes {
		if n.Ready() && n.Datacenter == "dc1" {
			eligible[id] = n
		}
	}
	return ReconcileSystem(SystemInput{
		Job: in.Job, Eval: in.Eval, Allocs: in.Allocs, Nodes: in.Nodes, Eligible: eligible,
		InScope: func(n *structs.Node) bool { return n.Datacenter == "dc1" },
		Evals:   in.Evals, Now: in.Now, NewID: in.NewID,
	})
}

func placeNodes(res *Result) []string {
	var out []string
	for _, p := range res.Places {
		out = append(out, p.NodeID)
	}
	return out
}

func TestSystem(t *testing.T) {
	running := structs.AllocClientStatusRunning
	cases := []struct {
		name  string
		typ   string
		setup func(w *world)
		check func(t *testing.T, w *world, res *Result)
	}{
		{
			name:  "a system job places one alloc per eligible node",
			typ:   structs.JobTypeSystem,
			setup: func(w *world) {},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "nodes", placeNodes(res), []string{"n1", "n2", "n3"})
				for _, p := range res.Places {
					if p.Name != "web.web[0]" {
						t.Fatalf("system allocs are all named [0], got %s", p.Name)
					}
				}
			},
		},
		{
			name: "a new node gets one and the others are left alone",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(0, "n2", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "nodes", placeNodes(res), []string{"n3"})
				if len(res.Stops) != 0 {
					t.Fatalf("stops: %v", stopIDs(res))
				}
			},
		},
		{
			name: "an alloc on a node moved out of the job's datacenters is stopped",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.nodes["n1"].Datacenter = "dc2"
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || s.Description != DescNodeNotEligible {
					t.Fatalf("want a not-eligible stop, got %+v", s)
				}
			},
		},
		{
			name: "a system alloc on a draining node stays until the drainer marks it",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.nodes["n1"].DrainStrategy = &structs.DrainStrategy{ForceDeadline: t0.Add(time.Hour)}
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Stops) != 0 {
					t.Fatalf("stops: %v", stopIDs(res))
				}
			},
		},
		{
			name: "a system alloc the drainer marked is stopped and not replaced",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				a := w.add(0, "n1", running)
				a.DesiredTransition.Migrate = structs.BoolPtr(true)
				w.nodes["n1"].DrainStrategy = &structs.DrainStrategy{ForceDeadline: t0.Add(time.Hour)}
				w.nodes["n1"].SchedulingEligibility = structs.NodeSchedulingIneligible
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || s.Description != DescMigrating {
					t.Fatalf("want a migrating stop, got %+v", s)
				}
				equalStrings(t, "nodes", placeNodes(res), []string{"n2", "n3"})
			},
		},
		{
			name: "a system alloc on a node past its drain deadline is stopped",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.nodes["n1"].DrainStrategy = &structs.DrainStrategy{ForceDeadline: t0.Add(-time.Second)}
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || s.Description != DescMigrating {
					t.Fatalf("want a migrating stop, got %+v", s)
				}
			},
		},
		{
			name: "a drain that ignores system jobs leaves them running past its deadline",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.nodes["n1"].DrainStrategy = &structs.DrainStrategy{ForceDeadline: t0.Add(-time.Second),
					DrainSpec: structs.DrainSpec{IgnoreSystemJobs: true}}
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Stops) != 0 {
					t.Fatalf("stops: %v", stopIDs(res))
				}
			},
		},
		{
			name: "an alloc on an ineligible node stays but the node gets nothing new",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.nodes["n1"].SchedulingEligibility = structs.NodeSchedulingIneligible
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Stops) != 0 {
					t.Fatalf("stops: %v", stopIDs(res))
				}
				equalStrings(t, "nodes", placeNodes(res), []string{"n2", "n3"})
			},
		},
		{
			name: "an alloc on a down node is lost and not replaced elsewhere",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(0, "n2", running)
				w.add(0, "n3", running)
				w.setNode("n1", structs.NodeStatusDown)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || !s.Lost {
					t.Fatalf("want lost, got %+v", s)
				}
				if len(res.Places) != 0 {
					t.Fatalf("placed %v", placeNodes(res))
				}
			},
		},
		{
			name: "an alloc on a disconnected node becomes unknown and waits",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.job = withDisconnect(w.job, 10*time.Minute, true, "")
				w.add(0, "n1", running)
				w.setNode("n1", structs.NodeStatusDisconnected)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Disconnects) != 1 || len(res.Followups) != 1 {
					t.Fatalf("want unknown + timeout, got %+v", res)
				}
				equalStrings(t, "nodes", placeNodes(res), []string{"n2", "n3"})
			},
		},
		{
			name: "a failed system alloc is replaced on its own node",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", structs.AllocClientStatusFailed)
				w.add(0, "n2", running)
				w.add(0, "n3", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Places) != 1 || res.Places[0].NodeID != "n1" || res.Places[0].Previous.ID != w.allocs[0].ID {
					t.Fatalf("want a replacement on n1, got %+v", res.Places)
				}
			},
		},
		{
			name: "a destructive update stops the old alloc and places the new one on the same node",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"} })
				w.setNode("n2", structs.NodeStatusDown)
				w.setNode("n3", structs.NodeStatusDown)
			},
			check: func(t *testing.T, w *world, res *Result) {
				if s := findStop(res, w.allocs[0].ID); s == nil || s.Description != DescUpdated {
					t.Fatalf("want the old alloc stopped, got %+v", s)
				}
				if len(res.Places) != 1 || res.Places[0].NodeID != "n1" || res.Places[0].Reason != PlaceDestructive {
					t.Fatalf("want a destructive placement on n1, got %+v", res.Places)
				}
			},
		},
		{
			name: "duplicate allocs on one node are stopped",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(0, "n1", running)
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "stops", stopIDs(res), []string{w.allocs[1].ID})
			},
		},
		{
			name: "a completed sysbatch alloc is not run again",
			typ:  structs.JobTypeSysBatch,
			setup: func(w *world) {
				w.add(0, "n1", structs.AllocClientStatusComplete)
				w.add(0, "n2", structs.AllocClientStatusFailed)
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "nodes", placeNodes(res), []string{"n3"})
			},
		},
		{
			name: "a sysbatch job update runs again where the old version completed",
			typ:  structs.JobTypeSysBatch,
			setup: func(w *world) {
				w.add(0, "n1", structs.AllocClientStatusComplete)
				w.job = nextVersion(w.job, func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"} })
			},
			check: func(t *testing.T, w *world, res *Result) {
				equalStrings(t, "nodes", placeNodes(res), []string{"n1", "n2", "n3"})
			},
		},
		{
			name: "a stopped system job stops everything",
			typ:  structs.JobTypeSystem,
			setup: func(w *world) {
				w.add(0, "n1", running)
				w.add(0, "n2", running)
				w.job = nextVersion(w.job, func(j *structs.Job) { j.Stop = true })
			},
			check: func(t *testing.T, w *world, res *Result) {
				if len(res.Stops) != 2 || len(res.Places) != 0 {
					t.Fatalf("got %+v", res)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := systemWorld(tc.typ, 3)
			tc.setup(w)
			tc.check(t, w, w.system())
		})
	}
}
