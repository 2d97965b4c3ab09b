package scheduler

import (
	"fmt"
	"sort"
	"time"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// Harness runs schedulers against a real in-memory state store. It is the
// Planner: plans are applied to the store the way the plan applier's raft
// entry would be (state.UpsertPlanResults, with the plan's deployment and
// deployment updates), and every plan and eval the
// scheduler hands over is recorded for the test to inspect.
type Harness struct {
	t     testT
	State *state.StateStore
	// Now is the clock the schedulers are given.
	Now time.Time
	// Seed, if not zero, seeds every scheduler (else the eval ID and the
	// snapshot's index do).
	Seed int64
	// NewID, if set, makes the IDs of the nodes and evals the harness
	// creates (else feasible.MockID's process-wide sequence does). A
	// property test sets it so a replayed history gets the same IDs, and
	// so the same orders and scheduler seeds, as the one that failed.
	NewID func() string
	index uint64

	Plans     []*structs.Plan
	Results   []*structs.PlanResult
	Updated   []*structs.Evaluation // UpdateEval
	Created   []*structs.Evaluation // CreateEval
	Reblocked []*structs.Evaluation // ReblockEval

	// Refuse, if set, names nodes whose part of a submitted plan the
	// applier refuses, to exercise the scheduler's retries.
	Refuse func(plan *structs.Plan) []string
}

// testT is what the harness needs of a test: *testing.T, *testing.B and
// *rapid.T all have it.
type testT interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// NewHarness returns a harness over an empty store.
func NewHarness(t testT) *Harness {
	st, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Harness{t: t, State: st, Now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), index: 1000}
}

func (h *Harness) next() uint64 { h.index++; return h.index }

// SubmitPlan applies the plan's accepted nodes to the store. Before
// committing it checks what the real applier checks about resources: every
// node the plan places on still fits (structs.AllocsFit over the state the
// commit would leave), and fails the test otherwise.
func (h *Harness) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, State, error) {
	h.Plans = append(h.Plans, plan)
	h.checkJournal(plan)
	refused := map[string]bool{}
	if h.Refuse != nil {
		for _, id := range h.Refuse(plan) {
			refused[id] = true
		}
	}
	result := &structs.PlanResult{NodeUpdate: map[string][]*structs.Allocation{}, NodeAllocation: map[string][]*structs.Allocation{},
		Deployment: plan.Deployment, DeploymentUpdates: plan.DeploymentUpdates}
	req := &structs.ApplyPlanResultsRequest{Job: plan.Job, EvalID: plan.EvalID, UpdatedAt: h.Now.UnixNano(),
		Deployment: plan.Deployment, DeploymentUpdates: plan.DeploymentUpdates}
	for _, node := range sortedKeys(plan.NodeUpdate) {
		if refused[node] {
			continue
		}
		result.NodeUpdate[node] = plan.NodeUpdate[node]
		req.AllocsStopped = append(req.AllocsStopped, plan.NodeUpdate[node]...)
	}
	for _, node := range sortedKeys(plan.NodeAllocation) {
		if refused[node] {
			continue
		}
		result.NodeAllocation[node] = plan.NodeAllocation[node]
		req.AllocsUpdated = append(req.AllocsUpdated, plan.NodeAllocation[node]...)
	}
	for node := range refused {
		result.RejectedNodes = append(result.RejectedNodes, node)
	}
	sort.Strings(result.RejectedNodes)

	idx := h.next()
	h.checkFits(idx, req, result)
	if err := h.State.Write(idx, func(tx *state.Txn) error { return tx.UpsertPlanResults(req) }); err != nil {
		h.t.Fatalf("applying plan: %v", err)
	}
	result.AllocIndex = idx
	h.Results = append(h.Results, result)
	if len(refused) > 0 {
		result.RefreshIndex = idx
		return result, h.snapshot(), nil
	}
	return result, nil, nil
}

// checkFits applies req to a snapshot and checks every node that gets
// placements or updates.
func (h *Harness) checkFits(idx uint64, req *structs.ApplyPlanResultsRequest, result *structs.PlanResult) {
	h.t.Helper()
	snap := h.snapshot()
	if err := snap.Write(idx, func(tx *state.Txn) error { return tx.UpsertPlanResults(req) }); err != nil {
		h.t.Fatalf("plan does not apply: %v\nstops: %s\nplacements and updates: %s", err, names(req.AllocsStopped), names(req.AllocsUpdated))
	}
	for node := range result.NodeAllocation {
		n, err := snap.NodeByID(nil, node)
		if err != nil || n == nil {
			h.t.Fatalf("plan places on unknown node %s (%v)", node, err)
		}
		allocs, err := snap.AllocsByNode(nil, node)
		if err != nil {
			h.t.Fatal(err)
		}
		fit, dim, _, err := structs.AllocsFit(n, allocs, nil)
		if err != nil || !fit {
			h.t.Fatalf("plan overcommits node %s: %s %v", node, dim, err)
		}
	}
}

func (h *Harness) snapshot() *state.StateSnapshot {
	s, err := h.State.Snapshot()
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

// UpdateEval records and stores the eval.
func (h *Harness) UpdateEval(e *structs.Evaluation) error {
	h.Updated = append(h.Updated, e)
	return h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
}

// CreateEval records and stores the eval.
func (h *Harness) CreateEval(e *structs.Evaluation) error {
	h.Created = append(h.Created, e)
	return h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
}

// ReblockEval records and stores the eval.
func (h *Harness) ReblockEval(e *structs.Evaluation) error {
	h.Reblocked = append(h.Reblocked, e)
	return h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) })
}

// --- building the world ---

// Node stores a MockNode (changed by change, if given) and returns it.
func (h *Harness) Node(change func(n *structs.Node)) *structs.Node {
	n := feasible.MockNode()
	if h.NewID != nil {
		n.ID, n.SecretID = h.NewID(), h.NewID()
	}
	if change != nil {
		change(n)
		feasible.MockComputeClass(n)
	}
	if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertNode(n, nil) }); err != nil {
		h.t.Fatal(err)
	}
	return n
}

// Nodes stores count MockNodes.
func (h *Harness) Nodes(count int) []*structs.Node {
	out := make([]*structs.Node, count)
	for i := range out {
		out[i] = h.Node(nil)
	}
	return out
}

// Job stores (registers) job and returns the stored version.
func (h *Harness) Job(job *structs.Job) *structs.Job {
	if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertJob(job) }); err != nil {
		h.t.Fatal(err)
	}
	return h.StoredJob(job.Namespace, job.ID)
}

// StoredJob returns the job as stored.
func (h *Harness) StoredJob(namespace, id string) *structs.Job {
	j, err := h.State.JobByID(nil, namespace, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return j
}

// Eval stores a pending eval of the job with the trigger.
func (h *Harness) Eval(job *structs.Job, trigger string) *structs.Evaluation {
	id := feasible.MockID()
	if h.NewID != nil {
		id = h.NewID()
	}
	e := &structs.Evaluation{
		ID: id, Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: trigger, JobID: job.ID, JobModifyIndex: job.JobModifyIndex, Status: structs.EvalStatusPending,
	}
	if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpsertEvals([]*structs.Evaluation{e}) }); err != nil {
		h.t.Fatal(err)
	}
	return e
}

// Process runs the scheduler for the eval's type on a fresh snapshot.
func (h *Harness) Process(eval *structs.Evaluation) {
	h.t.Helper()
	if err := h.ProcessErr(eval); err != nil {
		h.t.Fatalf("processing eval: %v", err)
	}
}

// ProcessErr is Process returning the scheduler's error.
func (h *Harness) ProcessErr(eval *structs.Evaluation) error {
	s, err := NewScheduler(eval.Type, Config{State: h.snapshot(), Planner: h, Now: h.Now, Seed: h.Seed})
	if err != nil {
		return err
	}
	return s.Process(eval)
}

// Run registers nothing new: it makes an eval of job with trigger and
// processes it, returning the eval.
func (h *Harness) Run(job *structs.Job, trigger string) *structs.Evaluation {
	h.t.Helper()
	e := h.Eval(job, trigger)
	h.Process(e)
	return e
}

// Allocs returns the job's allocs in name order.
func (h *Harness) Allocs(job *structs.Job) []*structs.Allocation {
	allocs, err := h.State.AllocsByJob(nil, job.Namespace, job.ID, true)
	if err != nil {
		h.t.Fatal(err)
	}
	sort.Slice(allocs, func(i, j int) bool {
		if allocs[i].Name != allocs[j].Name {
			return allocs[i].Name < allocs[j].Name
		}
		return allocs[i].CreateIndex < allocs[j].CreateIndex
	})
	return allocs
}

// Live returns the job's allocs the servers want running and whose client
// has not finished them (pending, running or unknown).
func (h *Harness) Live(job *structs.Job) []*structs.Allocation {
	var out []*structs.Allocation
	for _, a := range h.Allocs(job) {
		if !a.TerminalStatus() {
			out = append(out, a)
		}
	}
	return out
}

// Alloc returns one alloc by ID.
func (h *Harness) Alloc(id string) *structs.Allocation {
	a, err := h.State.AllocByID(nil, id)
	if err != nil || a == nil {
		h.t.Fatalf("alloc %s: %v", id, err)
	}
	return a
}

// Client reports status for the alloc the way its client would, with task
// states stamped at h.Now.
func (h *Harness) Client(a *structs.Allocation, status string) {
	h.t.Helper()
	u := a.Copy()
	u.ClientStatus = status
	ts := &structs.TaskState{State: structs.TaskStateRunning, StartedAt: h.Now}
	if structs.ClientTerminalStatus(status) {
		ts = &structs.TaskState{State: structs.TaskStateDead, Failed: status == structs.AllocClientStatusFailed, FinishedAt: h.Now}
		if old := a.TaskStates["web"]; old != nil {
			ts.StartedAt = old.StartedAt
		}
	} else if old := a.TaskStates["web"]; old != nil && !old.StartedAt.IsZero() {
		ts.StartedAt = old.StartedAt
	}
	u.TaskStates = map[string]*structs.TaskState{"web": ts}
	u.ModifyTime = h.Now.UnixNano()
	if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{u}) }); err != nil {
		h.t.Fatalf("client update of %s to %s: %v", structs.ShortID(a.ID), status, err)
	}
}

// ClientAll reports status for every alloc of job matching f.
func (h *Harness) ClientAll(job *structs.Job, status string, f func(a *structs.Allocation) bool) {
	for _, a := range h.Allocs(job) {
		if f(a) {
			h.Client(a, status)
		}
	}
}

// NodeStatus changes a node's status (a heartbeat or a missed TTL),
// stamped like the leader does: StatusUpdatedAt in Unix seconds.
func (h *Harness) NodeStatus(id, status string) {
	if err := h.State.Write(h.next(), func(tx *state.Txn) error { return tx.UpdateNodeStatus(id, status, h.Now.Unix(), nil) }); err != nil {
		h.t.Fatal(err)
	}
}

// LastUpdate returns the last UpdateEval of the eval with id.
func (h *Harness) LastUpdate(id string) *structs.Evaluation {
	for i := len(h.Updated) - 1; i >= 0; i-- {
		if h.Updated[i].ID == id {
			return h.Updated[i]
		}
	}
	h.t.Fatalf("eval %s was never updated", id)
	return nil
}

// CreatedBy returns the created evals with the trigger.
func (h *Harness) CreatedBy(trigger string) []*structs.Evaluation {
	var out []*structs.Evaluation
	for _, e := range h.Created {
		if e.TriggeredBy == trigger {
			out = append(out, e)
		}
	}
	return out
}

// LastPlan returns the last submitted plan.
func (h *Harness) LastPlan() *structs.Plan {
	if len(h.Plans) == 0 {
		h.t.Fatal("no plan was submitted")
	}
	return h.Plans[len(h.Plans)-1]
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// countBy counts allocs by a key.
func countBy(allocs []*structs.Allocation, key func(a *structs.Allocation) string) map[string]int {
	m := map[string]int{}
	for _, a := range allocs {
		m[key(a)]++
	}
	return m
}

func names(allocs []*structs.Allocation) string {
	var out []string
	for _, a := range allocs {
		node := a.NodeID
		if len(node) > 6 {
			node = node[len(node)-6:] // mock IDs differ at the end
		}
		out = append(out, fmt.Sprintf("%s@%s:%s/%s", a.Name, node, a.DesiredStatus, a.ClientStatus))
	}
	return fmt.Sprint(out)
}

// serviceJob returns a canonical service job with count allocs asking for
// little, so many fit on a MockNode.
func serviceJob(count int) *structs.Job {
	j := feasible.MockJob()
	j.TaskGroups[0].Count = count
	j.TaskGroups[0].Update = nil
	return j
}

// batchJob returns a canonical batch job (batch defaults) with count allocs.
func batchJob(count int) *structs.Job {
	j := feasible.MockJob()
	j.Type = structs.JobTypeBatch
	j.TaskGroups[0].Count = count
	j.TaskGroups[0].ReschedulePolicy = nil
	j.TaskGroups[0].RestartPolicy = nil
	j.TaskGroups[0].Migrate = nil
	j.TaskGroups[0].Update = nil
	j.Canonicalize()
	return j
}

// checkJournal fails the test if the plan has entries on a node its journal
// does not name: the stacks fold in what changed from the journal
// (Plan.TouchedSince), so a scheduler that wrote the plan's maps directly
// would place against a plan it never saw.
func (h *Harness) checkJournal(plan *structs.Plan) {
	touched, _ := plan.TouchedSince(0)
	named := map[string]bool{}
	for _, node := range touched {
		named[node] = true
	}
	for _, m := range []map[string][]*structs.Allocation{plan.NodeUpdate, plan.NodeAllocation} {
		for node, allocs := range m {
			if len(allocs) > 0 && !named[node] {
				h.t.Fatalf("the plan has entries on node %s that its journal does not name: change a plan through structs.Plan's methods", node)
			}
		}
	}
}
