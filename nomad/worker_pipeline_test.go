package nomad

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/planner/plannertest"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// miniLeader wires real workers, the real scheduler, broker, blocked evals,
// plan queue and applier together over one state store, with RPC methods
// that do what worker.go asks of the leader's endpoints and FSM. It checks
// that contract end to end; the real endpoints live in the server.
type miniLeader struct {
	t       *testing.T
	raft    *plannertest.Raft
	broker  *broker.EvalBroker
	blocked *broker.BlockedEvals
	queue   *planner.Queue
}

func newMiniLeader(t *testing.T) *miniLeader {
	eb, err := broker.NewEvalBroker(broker.EvalBrokerConfig{NackTimeout: time.Minute, DeliveryLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	l := &miniLeader{t: t, raft: plannertest.NewRaft(statetest.New(t)), broker: eb, queue: planner.NewQueue()}
	l.blocked = broker.NewBlockedEvals(eb, broker.BlockedEvalsConfig{})
	// The leader start sequence.
	eb.SetEnabled(true)
	l.blocked.SetEnabled(true)
	l.queue.SetEnabled(true)
	ctx, cancel := context.WithCancel(context.Background())
	applier := planner.NewApplier(l.queue, planner.Config{State: l.raft, Raft: l.raft, Clock: clock.NewFake(testEpoch), Workers: 2, GroupCommit: true})
	done := make(chan struct{})
	go func() {
		defer close(done)
		applier.Run(ctx)
	}()
	t.Cleanup(func() {
		// The leader stop sequence.
		l.queue.SetEnabled(false)
		cancel()
		<-done
		l.blocked.SetEnabled(false)
		l.broker.SetEnabled(false)
	})
	return l
}

func (l *miniLeader) State() *state.StateStore { return l.raft.Store() }
func (l *miniLeader) Now() time.Time           { return time.Now() }
func (l *miniLeader) Logger() hclog.Logger     { return hclog.NewNullLogger() }

// writeEvals is the raft write plus the FSM's leader hooks.
func (l *miniLeader) writeEvals(evals []*structs.Evaluation) error {
	if err := l.raft.TryWrite(func(i uint64) error {
		return l.raft.Store().Write(i, func(tx *state.Txn) error { return tx.UpsertEvals(evals) })
	}); err != nil {
		return err
	}
	for _, e := range evals {
		stored, err := l.raft.Store().EvalByID(nil, e.ID)
		if err != nil {
			return err
		}
		switch {
		case stored.ShouldEnqueue():
			l.broker.Enqueue(stored)
		case stored.ShouldBlock():
			l.blocked.Block(stored)
		case stored.Status == structs.EvalStatusComplete && len(stored.FailedTGAllocs) == 0:
			l.blocked.Untrack(stored.Namespace, stored.JobID)
		}
	}
	return nil
}

func (l *miniLeader) RPC(method string, args, reply any) error {
	switch method {
	case "Eval.Dequeue":
		req := args.(*structs.EvalDequeueRequest)
		ctx, cancel := context.WithTimeout(context.Background(), req.Timeout)
		defer cancel()
		e, tok, err := l.broker.Dequeue(ctx, req.Schedulers)
		if errors.Is(err, context.DeadlineExceeded) {
			return nil
		}
		if err != nil {
			return err
		}
		resp := reply.(*structs.EvalDequeueResponse)
		resp.Eval, resp.Token, resp.WaitIndex = e, tok, e.ModifyIndex
		return nil
	case "Eval.Ack":
		req := args.(*structs.EvalAckRequest)
		return l.broker.Ack(req.EvalID, req.Token)
	case "Eval.Nack":
		req := args.(*structs.EvalAckRequest)
		return l.broker.Nack(req.EvalID, req.Token)
	case "Eval.Update", "Eval.Create", "Eval.Reblock":
		req := args.(*structs.EvalUpdateRequest)
		held, ok := l.broker.OutstandingToken(req.EvalToken)
		if !ok {
			return fmt.Errorf("%s: %w", method, broker.ErrNotOutstanding)
		}
		if err := l.broker.OutstandingReset(held, req.EvalToken); err != nil {
			return err
		}
		if method == "Eval.Reblock" {
			if err := l.raft.TryWrite(func(i uint64) error {
				return l.raft.Store().Write(i, func(tx *state.Txn) error { return tx.UpsertEvals(req.Evals) })
			}); err != nil {
				return err
			}
			stored, _ := l.raft.Store().EvalByID(nil, req.Evals[0].ID)
			l.blocked.Reblock(stored, req.EvalToken)
			return nil
		}
		return l.writeEvals(req.Evals)
	case "Plan.Submit":
		plan := args.(*structs.PlanRequest).Plan
		if err := l.broker.PauseNackTimeout(plan.EvalID, plan.EvalToken); err != nil {
			return err
		}
		defer func() { _ = l.broker.ResumeNackTimeout(plan.EvalID, plan.EvalToken) }()
		fut, err := l.queue.Enqueue(plan)
		if err != nil {
			return err
		}
		res, err := fut.Wait()
		reply.(*structs.PlanResponse).Result = res
		return err
	}
	return fmt.Errorf("unexpected RPC %s", method)
}

// waitForState re-evaluates cond each time the state it read changes,
// until it holds or a deadline passes.
func waitForState(t *testing.T, what string, cond func(ws memdb.WatchSet) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		ws := memdb.NewWatchSet()
		if cond(ws) {
			return
		}
		if err := ws.WatchCtx(ctx); err != nil {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func liveAllocs(t *testing.T, st *state.StateStore, ws memdb.WatchSet, job *structs.Job) int {
	allocs, err := st.AllocsByJob(ws, job.Namespace, job.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range allocs {
		if !a.TerminalStatus() {
			n++
		}
	}
	return n
}

// A job of ten 500 MHz allocs on one 3900 MHz node: seven are placed and
// a blocked eval waits; a second node joins and unblocks it; the rest are
// placed.
func TestWorker_RealSchedulerThroughBrokerBlockedEvalsAndApplier(t *testing.T) {
	l := newMiniLeader(t)
	var workers []*Worker
	for i := 0; i < 2; i++ {
		workers = append(workers, NewWorker(context.Background(), l, []string{"service", "batch", "system", "sysbatch", "_core"}, i))
	}
	stopped := false
	stopWorkers := func() {
		if !stopped {
			stopped = true
			for _, w := range workers {
				w.Stop()
			}
		}
	}
	defer stopWorkers()

	st := l.raft.Store()
	job := feasible.MockJob()
	n1 := feasible.MockNode()
	l.raft.Write(t, func(i uint64) error { return st.Write(i, func(tx *state.Txn) error { return tx.UpsertNode(n1, nil) }) })
	l.raft.Write(t, func(i uint64) error { return st.Write(i, func(tx *state.Txn) error { return tx.UpsertJob(job) }) })
	eval := &structs.Evaluation{
		ID: structs.GenerateUUID(), Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: structs.EvalStatusPending,
	}
	if err := l.writeEvals([]*structs.Evaluation{eval}); err != nil {
		t.Fatal(err)
	}

	waitForState(t, "the first eval to complete", func(ws memdb.WatchSet) bool {
		e, _ := st.EvalByID(ws, eval.ID)
		return e.Status == structs.EvalStatusComplete
	})
	// The blocked eval was created (and parked) before the eval completed.
	if got := l.blocked.Stats().TotalBlocked; got != 1 {
		t.Fatalf("%d evals blocked, want 1", got)
	}
	if got := liveAllocs(t, st, nil, job); got != 7 {
		t.Fatalf("%d allocs placed on one node, want 7", got)
	}
	e, _ := st.EvalByID(nil, eval.ID)
	if e.BlockedEval == "" {
		t.Fatal("first eval names no blocked eval")
	}

	n2 := feasible.MockNode()
	idx := l.raft.Write(t, func(i uint64) error { return st.Write(i, func(tx *state.Txn) error { return tx.UpsertNode(n2, nil) }) })
	l.blocked.Unblock(n2.ComputedClass, idx)

	waitForState(t, "the blocked eval to place the rest", func(ws memdb.WatchSet) bool {
		b, _ := st.EvalByID(ws, e.BlockedEval)
		return b.Status == structs.EvalStatusComplete && liveAllocs(t, st, ws, job) == 10
	})
	stopWorkers() // each acks the eval it holds before it stops
	if s := l.broker.Stats(); s.TotalReady+s.TotalUnacked+s.TotalBlocked != 0 {
		t.Fatalf("broker not drained: %+v", s)
	}
	for _, n := range []*structs.Node{n1, n2} {
		allocs, _ := st.AllocsByNode(nil, n.ID)
		if fit, dim, _, _ := structs.AllocsFit(n, allocs, nil); !fit {
			t.Fatalf("node overcommitted: %s", dim)
		}
	}
}
