package planner_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Mock nodes have 3900 MHz and 7936 MB free after reservations, and port
// 22 reserved.

func TestPlanApply_RefusesPlacementThatOvercommitsOrReusesAPort(t *testing.T) {
	cases := []struct {
		name     string
		existing func(job *structs.Job, n *structs.Node) []*structs.Allocation
		place    func(job *structs.Job, n *structs.Node) *structs.Allocation
		refused  bool
	}{
		{
			name: "cpu within capacity is accepted",
			existing: func(j *structs.Job, n *structs.Node) []*structs.Allocation {
				return []*structs.Allocation{testAllocOn(j, n, 2000, 100)}
			},
			place: func(j *structs.Job, n *structs.Node) *structs.Allocation { return testAllocOn(j, n, 1900, 100) },
		},
		{
			name: "cpu over capacity is refused",
			existing: func(j *structs.Job, n *structs.Node) []*structs.Allocation {
				return []*structs.Allocation{testAllocOn(j, n, 2000, 100)}
			},
			place:   func(j *structs.Job, n *structs.Node) *structs.Allocation { return testAllocOn(j, n, 1901, 100) },
			refused: true,
		},
		{
			name: "memory over capacity is refused",
			existing: func(j *structs.Job, n *structs.Node) []*structs.Allocation {
				return []*structs.Allocation{testAllocOn(j, n, 100, 7000)}
			},
			place:   func(j *structs.Job, n *structs.Node) *structs.Allocation { return testAllocOn(j, n, 100, 1000) },
			refused: true,
		},
		{
			name: "a port held by a running alloc is refused",
			existing: func(j *structs.Job, n *structs.Node) []*structs.Allocation {
				return []*structs.Allocation{testAllocOn(j, n, 100, 100, 8080)}
			},
			place:   func(j *structs.Job, n *structs.Node) *structs.Allocation { return testAllocOn(j, n, 100, 100, 8080) },
			refused: true,
		},
		{
			name:    "a reserved node port is refused",
			place:   func(j *structs.Job, n *structs.Node) *structs.Allocation { return testAllocOn(j, n, 100, 100, 22) },
			refused: true,
		},
		{
			name: "a port of a client-complete alloc is free",
			existing: func(j *structs.Job, n *structs.Node) []*structs.Allocation {
				a := testAllocOn(j, n, 3000, 100, 8080)
				a.ClientStatus = structs.AllocClientStatusComplete
				return []*structs.Allocation{a}
			},
			place: func(j *structs.Job, n *structs.Node) *structs.Allocation { return testAllocOn(j, n, 3000, 100, 8080) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newPlanHarness(t)
			h.start(planner.Config{}, false)
			job, node := h.job(), h.node(nil)
			if tc.existing != nil {
				h.existing(tc.existing(job, node)...)
			}
			a := tc.place(job, node)
			res := h.mustSubmit(testPlan(job, a))
			if tc.refused {
				if !reflect.DeepEqual(res.RejectedNodes, []string{node.ID}) || res.RefreshIndex == 0 || len(res.NodeAllocation) != 0 {
					t.Fatalf("result %+v, want the node refused with a refresh index", res)
				}
				if h.alloc(a.ID) != nil {
					t.Fatal("refused alloc was committed")
				}
				return
			}
			if len(res.RejectedNodes) != 0 || res.RefreshIndex != 0 || res.AllocIndex == 0 {
				t.Fatalf("result %+v, want a full commit", res)
			}
			if got := h.alloc(a.ID); got == nil || got.CreateIndex != res.AllocIndex {
				t.Fatalf("committed alloc %+v at %d", got, res.AllocIndex)
			}
		})
	}
}

// Promise 1: an alloc the servers stopped keeps its port and memory until
// its client says it stopped.
func TestPlanApply_StoppedButRunningAllocKeepsItsPortAndMemoryUntilClientComplete(t *testing.T) {
	h := newPlanHarness(t)
	h.start(planner.Config{}, false)
	job, node := h.job(), h.node(nil)
	old := testAllocOn(job, node, 100, 6000, 8080)
	h.existing(old)
	old.ClientStatus = structs.AllocClientStatusRunning
	h.client(old.ID, structs.AllocClientStatusRunning)

	// The job is stopped: the plan stops the old alloc; its client has not
	// acted yet.
	stop := testPlan(job)
	stop.AppendStoppedAlloc(h.alloc(old.ID), "job stopped", "", "")
	if res := h.mustSubmit(stop); len(res.RejectedNodes) != 0 {
		t.Fatalf("stop refused: %+v", res)
	}
	if got := h.alloc(old.ID); got.DesiredStatus != structs.AllocDesiredStatusStop || got.ClientStatus != structs.AllocClientStatusRunning {
		t.Fatalf("old alloc %s/%s", got.DesiredStatus, got.ClientStatus)
	}

	// The job is run again with the same static port: refused, and so is
	// one that only needs the memory.
	samePort := testAllocOn(job, node, 100, 100, 8080)
	needsMemory := testAllocOn(job, node, 100, 2000)
	for _, a := range []*structs.Allocation{samePort, needsMemory} {
		res := h.mustSubmit(testPlan(job, a))
		if len(res.RejectedNodes) != 1 || res.RefreshIndex == 0 {
			t.Fatalf("placement on resources of a running stopped alloc accepted: %+v", res)
		}
	}
	// Stopping and placing in the same plan does not free them either.
	both := testPlan(job, samePort)
	both.AppendStoppedAlloc(h.alloc(old.ID), "again", "", "")
	if res := h.mustSubmit(both); len(res.RejectedNodes) != 1 {
		t.Fatalf("stop+place in one plan accepted: %+v", res)
	}

	// The client reports the old alloc complete: now the port is free.
	h.client(old.ID, structs.AllocClientStatusComplete)
	res := h.mustSubmit(testPlan(job, samePort, needsMemory))
	if len(res.RejectedNodes) != 0 || len(res.NodeAllocation[node.ID]) != 2 {
		t.Fatalf("placement after client-complete refused: %+v", res)
	}
}

func TestPlanApply_LostMarkFreesResourcesInTheSamePlan(t *testing.T) {
	h := newPlanHarness(t)
	h.start(planner.Config{}, false)
	job, node := h.job(), h.node(nil)
	old := testAllocOn(job, node, 100, 100, 9000)
	h.existing(old)
	p := testPlan(job, testAllocOn(job, node, 100, 100, 9000))
	p.AppendStoppedAlloc(h.alloc(old.ID), "node was down", structs.AllocClientStatusLost, "")
	if res := h.mustSubmit(p); len(res.RejectedNodes) != 0 {
		t.Fatalf("placement on a lost alloc's port refused: %+v", res)
	}
	if got := h.alloc(old.ID); got.ClientStatus != structs.AllocClientStatusLost {
		t.Fatalf("old alloc client status %s", got.ClientStatus)
	}
}

func TestPlanApply_PartialCommitReturnsRefreshIndexAndRejectedNodes(t *testing.T) {
	h := newPlanHarness(t)
	h.start(planner.Config{Workers: 4}, false)
	job := h.job()
	fits, full, alsoFits := h.node(nil), h.node(nil), h.node(nil)
	h.existing(testAllocOn(job, full, 3800, 100))
	p := testPlan(job,
		testAllocOn(job, fits, 1000, 100),
		testAllocOn(job, full, 1000, 100),
		testAllocOn(job, alsoFits, 1000, 100))
	res := h.mustSubmit(p)
	if !reflect.DeepEqual(res.RejectedNodes, []string{full.ID}) {
		t.Fatalf("rejected %v, want only the full node", res.RejectedNodes)
	}
	if len(res.NodeAllocation) != 2 || res.NodeAllocation[fits.ID] == nil || res.NodeAllocation[alsoFits.ID] == nil {
		t.Fatalf("committed nodes %v", res.NodeAllocation)
	}
	latest, _ := h.store.LatestIndex()
	if res.AllocIndex == 0 || res.RefreshIndex < res.AllocIndex || res.RefreshIndex > latest {
		t.Fatalf("alloc index %d, refresh index %d (latest %d)", res.AllocIndex, res.RefreshIndex, latest)
	}
	if full, expected, actual := res.FullCommit(p); full || expected != 3 || actual != 2 {
		t.Fatalf("FullCommit = %v %d %d", full, expected, actual)
	}
	allocs, _ := h.store.AllocsByNode(nil, full.ID)
	if len(allocs) != 1 {
		t.Fatalf("refused node has %d allocs", len(allocs))
	}
}

func TestPlanApply_AllAtOnceIsAllOrNothing(t *testing.T) {
	h := newPlanHarness(t)
	h.start(planner.Config{}, false)
	job := h.job()
	fits, full := h.node(nil), h.node(nil)
	h.existing(testAllocOn(job, full, 3800, 100))
	entries := h.raft.EntryCount()
	p := testPlan(job, testAllocOn(job, fits, 1000, 100), testAllocOn(job, full, 1000, 100))
	p.AllAtOnce = true
	p.Deployment = &structs.Deployment{ID: "d1", Namespace: job.Namespace, JobID: job.ID}
	res := h.mustSubmit(p)
	if !res.IsNoOp() || res.AllocIndex != 0 || res.RefreshIndex == 0 || !reflect.DeepEqual(res.RejectedNodes, []string{full.ID}) {
		t.Fatalf("all-at-once result %+v, want nothing committed", res)
	}
	if h.raft.EntryCount() != entries {
		t.Fatal("a raft entry was written for a refused all-at-once plan")
	}
	allocs, _ := h.store.AllocsByNode(nil, fits.ID)
	if len(allocs) != 0 {
		t.Fatal("part of an all-at-once plan was committed")
	}
}

func TestPlanApply_NodeStatusGatesPlacementsButNotStops(t *testing.T) {
	cases := []struct {
		name   string
		node   func(*structs.Node)
		reason string
	}{
		{"down", func(n *structs.Node) { n.Status = structs.NodeStatusDown }, "node is down"},
		{"disconnected", func(n *structs.Node) { n.Status = structs.NodeStatusDisconnected }, "node is disconnected"},
		{"initializing", func(n *structs.Node) { n.Status = structs.NodeStatusInit }, "node is initializing"},
		{"ineligible", func(n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible }, "ineligible"},
		{"draining", func(n *structs.Node) {
			n.DrainStrategy = &structs.DrainStrategy{}
			n.SchedulingEligibility = structs.NodeSchedulingIneligible
		}, "draining"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newPlanHarness(t)
			h.start(planner.Config{}, false)
			job := h.job()
			node := h.node(nil)
			running, unknown, lost := testAllocOn(job, node, 100, 100), testAllocOn(job, node, 100, 100), testAllocOn(job, node, 100, 100)
			h.existing(running, unknown, lost)
			node = node.Copy()
			tc.node(node)
			h.write(func(i uint64) error {
				return h.store.Write(i, func(tx *state.Txn) error { return tx.UpsertNode(node, nil) })
			})
			if tc.name == "draining" || tc.name == "ineligible" {
				h.write(func(i uint64) error {
					if node.DrainStrategy != nil {
						return h.store.Write(i, func(tx *state.Txn) error {
							return tx.UpdateNodeDrain(node.ID, node.DrainStrategy, false, 1, nil, state.DrainOperator{})
						})
					}
					return h.store.Write(i, func(tx *state.Txn) error {
						return tx.UpdateNodeEligibility(node.ID, structs.NodeSchedulingIneligible, 1, nil)
					})
				})
			}

			res := h.mustSubmit(testPlan(job, testAllocOn(job, node, 100, 100)))
			if len(res.RejectedNodes) != 1 {
				t.Fatalf("placement on a %s node accepted", tc.name)
			}

			// Stops, lost and unknown marks are how work leaves the node.
			p := testPlan(job)
			p.AppendStoppedAlloc(h.alloc(running.ID), "migrating", "", "")
			p.AppendLostAlloc(h.alloc(lost.ID), "node down", testEpoch)
			p.AppendUnknownAlloc(h.alloc(unknown.ID), "node disconnected", "", testEpoch)
			res = h.mustSubmit(p)
			if len(res.RejectedNodes) != 0 || res.AllocIndex == 0 {
				t.Fatalf("stops on a %s node refused: %+v", tc.name, res)
			}
			if h.alloc(running.ID).DesiredStatus != structs.AllocDesiredStatusStop ||
				h.alloc(lost.ID).ClientStatus != structs.AllocClientStatusLost ||
				h.alloc(unknown.ID).ClientStatus != structs.AllocClientStatusUnknown {
				t.Fatal("stops and marks were not committed")
			}
		})
	}
}

func TestPlanApply_RefusesInvalidServerUpdatesAndUnknownNodes(t *testing.T) {
	h := newPlanHarness(t)
	h.start(planner.Config{}, false)
	job, node := h.job(), h.node(nil)
	stopped := testAllocOn(job, node, 100, 100)
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	h.existing(stopped)

	revive := h.alloc(stopped.ID).Copy()
	revive.DesiredStatus = structs.AllocDesiredStatusRun
	res := h.mustSubmit(testPlan(job, revive))
	if len(res.RejectedNodes) != 1 {
		t.Fatalf("a stopped alloc was set back to run: %+v", res)
	}

	ghost := testAllocOn(job, node, 100, 100)
	ghost.NodeID = "no-such-node"
	res = h.mustSubmit(testPlan(job, ghost))
	if !reflect.DeepEqual(res.RejectedNodes, []string{"no-such-node"}) {
		t.Fatalf("placement on a missing node: %+v", res)
	}
}

func TestPlanApply_GroupCommitMergesDisjointPlansAndMatchesOneAtATime(t *testing.T) {
	run := func(groupCommit bool) (results []*structs.PlanResult, entries int) {
		h := newPlanHarness(t)
		job := h.job()
		nodes := []*structs.Node{h.node(nil), h.node(nil), h.node(nil)}
		// Ten plans, queued before the applier starts so they form one
		// batch: each takes 1500 MHz on a node, so the third on a node
		// does not fit.
		var futures []planner.Future
		for i := 0; i < 10; i++ {
			f, err := h.queue.Enqueue(testPlan(job, testAllocOn(job, nodes[i%3], 1500, 100)))
			if err != nil {
				t.Fatal(err)
			}
			futures = append(futures, f)
		}
		before := h.raft.EntryCount()
		h.start(planner.Config{GroupCommit: groupCommit, Workers: 2}, false)
		for _, f := range futures {
			res, err := f.Wait()
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, res)
		}
		return results, h.raft.EntryCount() - before
	}
	alone, aloneEntries := run(false)
	grouped, groupedEntries := run(true)
	if aloneEntries != 6 || groupedEntries != 1 {
		t.Fatalf("raft entries: %d one at a time, %d grouped; want 6 and 1", aloneEntries, groupedEntries)
	}
	for i := range alone {
		a, g := alone[i], grouped[i]
		if len(a.RejectedNodes) != len(g.RejectedNodes) || len(a.NodeAllocation) != len(g.NodeAllocation) {
			t.Fatalf("plan %d: one at a time %+v, grouped %+v", i, a, g)
		}
		if wantRefused := i >= 6; (len(g.RejectedNodes) == 1) != wantRefused {
			t.Fatalf("plan %d refused=%v", i, len(g.RejectedNodes) == 1)
		}
	}
}

func TestPlanApply_FailedMergedCommitRetriesPlansOneAtATime(t *testing.T) {
	h := newPlanHarness(t)
	job := h.job()
	n1, n2 := h.node(nil), h.node(nil)
	h.raft.Fail = func(req *structs.ApplyPlanResultsRequest) error {
		if len(req.AllocsUpdated) > 1 {
			return errors.New("entry too large")
		}
		return nil
	}
	f1, _ := h.queue.Enqueue(testPlan(job, testAllocOn(job, n1, 100, 100)))
	f2, _ := h.queue.Enqueue(testPlan(job, testAllocOn(job, n2, 100, 100)))
	h.start(planner.Config{GroupCommit: true}, false)
	for _, f := range []planner.Future{f1, f2} {
		res, err := f.Wait()
		if err != nil || res.AllocIndex == 0 {
			t.Fatalf("plan after a failed merged entry: %+v, %v", res, err)
		}
	}
}

func TestPlanApply_RaftFailureIsReturnedAndNextPlanIsRecheckedOnFreshState(t *testing.T) {
	h := newPlanHarness(t)
	job, node := h.job(), h.node(nil)
	first := testAllocOn(job, node, 3000, 100)
	h.raft.Fail = func(req *structs.ApplyPlanResultsRequest) error {
		if len(req.AllocsUpdated) == 1 && req.AllocsUpdated[0].ID == first.ID {
			return errTestRaft
		}
		return nil
	}
	f1, _ := h.queue.Enqueue(testPlan(job, first))
	// Checked while the first is in flight, it does not fit beside it;
	// once the first fails it must be checked again, and then fits.
	f2, _ := h.queue.Enqueue(testPlan(job, testAllocOn(job, node, 3000, 100)))
	h.start(planner.Config{}, true)
	if _, err := f1.Wait(); !errors.Is(err, errTestRaft) {
		t.Fatalf("first plan: %v", err)
	}
	res, err := f2.Wait()
	if err != nil || len(res.RejectedNodes) != 0 {
		t.Fatalf("second plan after the first failed: %+v, %v", res, err)
	}
}

func TestPlanApply_RefreshIndexCoversEarlierPlanOfTheBatch(t *testing.T) {
	h := newPlanHarness(t)
	job, node := h.job(), h.node(nil)
	f1, _ := h.queue.Enqueue(testPlan(job, testAllocOn(job, node, 3000, 100)))
	f2, _ := h.queue.Enqueue(testPlan(job, testAllocOn(job, node, 3000, 100)))
	h.start(planner.Config{}, true)
	r1, err := f1.Wait()
	if err != nil {
		t.Fatal(err)
	}
	r2, err := f2.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.RejectedNodes) != 1 || r2.RefreshIndex < r1.AllocIndex {
		t.Fatalf("second plan refused at refresh index %d, but the first committed at %d", r2.RefreshIndex, r1.AllocIndex)
	}
}

func TestPlanApply_ReasonsNameTheExhaustedDimension(t *testing.T) {
	h := newPlanHarness(t)
	job, node := h.job(), h.node(nil)
	h.existing(testAllocOn(job, node, 100, 100, 8080))
	snap, _ := h.store.Snapshot()
	for _, tc := range []struct {
		a    *structs.Allocation
		want string
	}{
		{testAllocOn(job, node, 4000, 100), "cpu"},
		{testAllocOn(job, node, 100, 9000), "memory"},
		{testAllocOn(job, node, 100, 100, 8080), "port 8080"},
	} {
		_, reasons, err := planner.EvaluatePlan(snap, testPlan(job, tc.a), 1)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(reasons[node.ID], tc.want) {
			t.Fatalf("reason %q, want it to name %q", reasons[node.ID], tc.want)
		}
	}
}

func TestPlanApply_GroupCommitKeepsOverlappingPlansInSeparateEntries(t *testing.T) {
	h := newPlanHarness(t)
	job, node := h.job(), h.node(nil)
	placed := testAllocOn(job, node, 100, 100)
	place := testPlan(job, placed)
	// Queued behind the placement: a stop of the same alloc, and two plans
	// that each bring a deployment.
	stop := testPlan(job)
	stop.AppendStoppedAlloc(placed, "replaced", "", "")
	d1 := testPlan(job, testAllocOn(job, node, 100, 100))
	d1.Deployment = &structs.Deployment{ID: "d1", Namespace: job.Namespace, JobID: job.ID}
	d2 := testPlan(job, testAllocOn(job, node, 100, 100))
	d2.Deployment = &structs.Deployment{ID: "d2", Namespace: job.Namespace, JobID: job.ID}
	var futures []planner.Future
	for _, p := range []*structs.Plan{place, stop, d1, d2} {
		f, err := h.queue.Enqueue(p)
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
	}
	before := h.raft.EntryCount()
	h.start(planner.Config{GroupCommit: true}, true)
	for i, f := range futures {
		res, err := f.Wait()
		if err != nil || len(res.RejectedNodes) != 0 || res.AllocIndex == 0 {
			t.Fatalf("plan %d: %+v, %v", i, res, err)
		}
	}
	// [place], [stop, d1], [d2]: the stop touches the placed alloc, and one
	// entry holds one deployment.
	if got := h.raft.EntryCount() - before; got != 3 {
		t.Fatalf("%d raft entries, want 3", got)
	}
	if a := h.alloc(placed.ID); a.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("placed alloc desired status %s after the stop", a.DesiredStatus)
	}
	for _, id := range []string{"d1", "d2"} {
		if d, _ := h.store.DeploymentByID(nil, id); d == nil {
			t.Fatalf("deployment %s not committed", id)
		}
	}
}
