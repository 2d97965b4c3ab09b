package reconciler

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// testJob returns a canonicalized job "web" with one group "web" of count
// allocs running one raw_exec task.
func testJob(typ string, count int) *structs.Job {
	j := &structs.Job{
		ID: "web", Name: "web", Type: typ, Namespace: structs.DefaultNamespace,
		Datacenters: []string{"dc1"}, Version: 1, JobModifyIndex: 10,
		TaskGroups: []*structs.TaskGroup{{
			Name:  "web",
			Count: count,
			Tasks: []*structs.Task{{
				Name: "server", Driver: "raw_exec",
				Config:    map[string]any{"command": "/bin/sleep", "args": []any{"1000"}},
				Resources: &structs.Resources{CPU: 100, MemoryMB: 128},
			}},
		}},
	}
	if typ == structs.JobTypeService {
		j.Update = *structs.DefaultUpdateStrategy()
		j.Update.MaxParallel = 0
	}
	j.Canonicalize()
	return j
}

// withDisconnect gives the job's first group a disconnect block.
func withDisconnect(j *structs.Job, lostAfter time.Duration, replace bool, reconcile string) *structs.Job {
	j.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: lostAfter, Replace: structs.BoolPtr(replace), Reconcile: reconcile}
	j.TaskGroups[0].Disconnect.Canonicalize()
	return j
}

// nextVersion returns a copy of j registered again, with change applied.
func nextVersion(j *structs.Job, change func(*structs.Job)) *structs.Job {
	n := j.Copy()
	n.Version++
	n.JobModifyIndex += 10
	if change != nil {
		change(n)
	}
	return n
}

func testNode(id, status string) *structs.Node {
	n := &structs.Node{ID: id, Name: id, Datacenter: "dc1", Status: status, SchedulingEligibility: structs.NodeSchedulingEligible}
	n.Canonicalize()
	return n
}

// world is a job with its allocs, nodes and evals: the input of one
// reconcile, and what a test applies the result to.
type world struct {
	job    *structs.Job
	allocs []*structs.Allocation
	nodes  map[string]*structs.Node
	evals  []*structs.Evaluation
	now    time.Time
	seq    int
	evalID string
}

func newWorld(job *structs.Job, nodeIDs ...string) *world {
	w := &world{job: job, nodes: map[string]*structs.Node{}, now: t0, evalID: "eval-0"}
	for _, id := range nodeIDs {
		w.nodes[id] = testNode(id, structs.NodeStatusReady)
	}
	return w
}

func (w *world) id(prefix string) string {
	w.seq++
	return fmt.Sprintf("%s-%03d", prefix, w.seq)
}

// add creates an alloc of the current job version at index on nodeID.
func (w *world) add(index int, nodeID, clientStatus string) *structs.Allocation {
	a := &structs.Allocation{
		ID: w.id("alloc"), Namespace: w.job.Namespace, JobID: w.job.ID, Job: w.job,
		TaskGroup: w.job.TaskGroups[0].Name, Name: structs.AllocName(w.job.ID, w.job.TaskGroups[0].Name, index),
		NodeID: nodeID, DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: clientStatus,
		CreateIndex: uint64(100 + w.seq),
	}
	w.allocs = append(w.allocs, a)
	return a
}

// disconnect marks a as the scheduler does when its node disconnects.
func disconnected(a *structs.Allocation, at time.Time) *structs.Allocation {
	a.ClientStatus = structs.AllocClientStatusUnknown
	a.AppendState(structs.AllocStateFieldClientStatus, structs.AllocClientStatusUnknown, at)
	return a
}

func (w *world) setNode(id, status string) *structs.Node {
	n := testNode(id, status)
	w.nodes[id] = n
	return n
}

// setNodeSince sets a node's status as the leader writes it: with the time
// (Unix seconds) the status began.
func (w *world) setNodeSince(id, status string, since time.Time) *structs.Node {
	n := w.setNode(id, status)
	n.StatusUpdatedAt = since.Unix()
	return n
}

func (w *world) input() Input {
	ids := 0
	eval := &structs.Evaluation{ID: w.evalID, Namespace: structs.DefaultNamespace, JobID: "web", Type: structs.JobTypeService, Priority: 50}
	if w.job != nil {
		eval.Type = w.job.Type
	}
	for _, e := range w.evals {
		if e.ID == w.evalID {
			eval = e.Copy() // a follow-up being run: as stored, WaitUntil included
		}
	}
	return Input{
		Job: w.job, Eval: eval,
		Allocs: w.allocs, Nodes: w.nodes, Evals: w.evals, Now: w.now,
		NewID: func() string { ids++; return fmt.Sprintf("%s-followup-%d", w.evalID, ids) },
	}
}

func (w *world) reconcile() *Result { return Reconcile(w.input()) }

func (w *world) byID(id string) *structs.Allocation {
	for _, a := range w.allocs {
		if a.ID == id {
			return a
		}
	}
	return nil
}

// apply commits a result the way the plan applier and state store would:
// pick chooses each placement's node, or "" when none fits (the placement
// and its conditional stop are then dropped).
func (w *world) apply(res *Result, pick func(p Placement) string) {
	replace := func(c *structs.Allocation) {
		for i, a := range w.allocs {
			if a.ID == c.ID {
				w.allocs[i] = c
				return
			}
		}
		panic("unknown alloc " + c.ID)
	}
	for _, s := range res.Stops {
		c := s.Alloc.Copy()
		c.DesiredStatus = structs.AllocDesiredStatusStop
		c.DesiredDescription = s.Description
		if s.Lost {
			c.ClientStatus = structs.AllocClientStatusLost
			c.AppendState(structs.AllocStateFieldClientStatus, structs.AllocClientStatusLost, w.now)
		}
		replace(c)
	}
	for _, u := range res.Updates {
		replace(u.Alloc.Copy())
	}
	for _, d := range res.Disconnects {
		c := d.Alloc.Copy()
		c.ClientStatus = structs.AllocClientStatusUnknown
		c.AppendState(structs.AllocStateFieldClientStatus, structs.AllocClientStatusUnknown, w.now)
		c.FollowupEvalID = d.FollowupEvalID
		replace(c)
	}
	for _, p := range res.Places {
		node := p.NodeID
		if node == "" {
			node = pick(p)
		}
		if node == "" {
			continue
		}
		a := &structs.Allocation{
			ID: w.id("alloc"), Namespace: w.job.Namespace, JobID: w.job.ID, Job: w.job, TaskGroup: p.TaskGroup.Name,
			Name: p.Name, NodeID: node, DesiredStatus: structs.AllocDesiredStatusRun,
			ClientStatus: structs.AllocClientStatusPending, RescheduleTracker: p.RescheduleTracker,
			CreateIndex: uint64(100 + w.seq),
		}
		if p.Previous != nil {
			a.PreviousAllocation = p.Previous.ID
			prev := w.byID(p.Previous.ID)
			if p.StopPrevious != nil {
				prev = p.StopPrevious.Alloc.Copy()
				prev.DesiredStatus = structs.AllocDesiredStatusStop
				prev.DesiredDescription = p.StopPrevious.Description
			} else {
				prev = prev.Copy()
			}
			prev.NextAllocation = a.ID
			replace(prev)
		}
		w.allocs = append(w.allocs, a)
	}
	w.evals = append(w.evals, res.Followups...)
	for _, c := range res.Cancel {
		for i, e := range w.evals {
			if e.ID == c.ID {
				w.evals[i] = c
			}
		}
	}
}

// firstReady picks the first ready node in ID order.
func (w *world) firstReady(Placement) string {
	ids := make([]string, 0, len(w.nodes))
	for id, n := range w.nodes {
		if n.Status == structs.NodeStatusReady && n.DrainStrategy == nil {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids[0]
}

// names returns the placements' names, sorted.
func placeNames(res *Result) []string {
	var out []string
	for _, p := range res.Places {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

func stopIDs(res *Result) []string {
	var out []string
	for _, s := range res.Stops {
		out = append(out, s.Alloc.ID)
	}
	sort.Strings(out)
	return out
}

func placesBy(res *Result, r PlaceReason) []Placement {
	var out []Placement
	for _, p := range res.Places {
		if p.Reason == r {
			out = append(out, p)
		}
	}
	return out
}

func findStop(res *Result, id string) *Stop {
	for i := range res.Stops {
		if res.Stops[i].Alloc.ID == id {
			return &res.Stops[i]
		}
	}
	return nil
}

func findUpdate(res *Result, id string) *Update {
	for i := range res.Updates {
		if res.Updates[i].Alloc.ID == id {
			return &res.Updates[i]
		}
	}
	return nil
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}
