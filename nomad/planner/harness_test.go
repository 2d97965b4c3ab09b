package planner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/planner/plannertest"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// testEpoch is the applier's clock in these tests: it stamps UpdatedAt.
var testEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// planHarness runs one applier over a queue and a plannertest.Raft that
// commits into a real state store.
type planHarness struct {
	t     testing.TB
	raft  *plannertest.Raft
	store *state.StateStore
	queue *planner.Queue
	stop  func()
}

func newPlanHarness(t testing.TB) *planHarness {
	store := statetest.New(t)
	h := &planHarness{t: t, raft: plannertest.NewRaft(store), store: store, queue: planner.NewQueue()}
	h.queue.SetEnabled(true)
	t.Cleanup(func() {
		if h.stop != nil {
			h.stop()
		}
	})
	return h
}

// start runs the applier with cfg's tuning until the test ends; lazy
// delays commits until the applier waits for them.
func (h *planHarness) start(cfg planner.Config, lazy bool) {
	h.raft.SetLazy(lazy)
	cfg.State, cfg.Raft, cfg.Clock = h.raft, h.raft, clock.NewFake(testEpoch)
	ctx, cancel := context.WithCancel(context.Background())
	applier := planner.NewApplier(h.queue, cfg)
	done := make(chan struct{})
	go func() {
		defer close(done)
		applier.Run(ctx)
	}()
	h.stop = func() {
		h.queue.SetEnabled(false)
		cancel()
		<-done
	}
}

// write applies a setup or client change at the next index.
func (h *planHarness) write(fn func(index uint64) error) uint64 {
	h.t.Helper()
	return h.raft.Write(h.t, fn)
}

func (h *planHarness) submit(plan *structs.Plan) (*structs.PlanResult, error) {
	fut, err := h.queue.Enqueue(plan)
	if err != nil {
		return nil, err
	}
	return fut.Wait()
}

func (h *planHarness) mustSubmit(plan *structs.Plan) *structs.PlanResult {
	h.t.Helper()
	res, err := h.submit(plan)
	if err != nil {
		h.t.Fatalf("plan %s: %v", plan.EvalID, err)
	}
	return res
}

func (h *planHarness) node(mut func(*structs.Node)) *structs.Node {
	n := feasible.MockNode()
	if mut != nil {
		mut(n)
	}
	h.write(func(i uint64) error {
		return h.store.Write(i, func(tx *state.Txn) error { return tx.UpsertNode(n, nil) })
	})
	return n
}

func (h *planHarness) job() *structs.Job {
	j := feasible.MockJob()
	h.write(func(i uint64) error { return h.store.Write(i, func(tx *state.Txn) error { return tx.UpsertJob(j) }) })
	stored, err := h.store.JobByID(nil, j.Namespace, j.ID)
	if err != nil || stored == nil {
		h.t.Fatalf("job: %v", err)
	}
	return stored
}

// existing writes allocs as if an earlier plan had placed them.
func (h *planHarness) existing(allocs ...*structs.Allocation) {
	h.write(func(i uint64) error {
		return h.store.Write(i, func(tx *state.Txn) error { return tx.UpsertAllocs(allocs) })
	})
}

// client reports a client status for an alloc.
func (h *planHarness) client(id, status string) {
	h.write(func(i uint64) error {
		return h.store.Write(i, func(tx *state.Txn) error {
			return tx.UpdateAllocsFromClient([]*structs.Allocation{{ID: id, ClientStatus: status}})
		})
	})
}

func (h *planHarness) alloc(id string) *structs.Allocation {
	a, err := h.store.AllocByID(nil, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

var (
	testAllocOn = plannertest.AllocOn
	testPlan    = plannertest.Plan
	errTestRaft = errors.New("test raft: leadership lost")
)
