package nomad

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/scheduler"
	"github.com/drover-sched/drover/structs"
)

// fakeWorkerServer answers the worker's RPCs from channels and records
// them. Eval.Dequeue hands out evals sent on evals, and otherwise waits
// until the test ends.
type fakeWorkerServer struct {
	store  *state.StateStore
	evals  chan *structs.EvalDequeueResponse
	closed chan struct{}

	mu          sync.Mutex
	calls       []string
	dequeueErrs int
	planResult  func(plan *structs.Plan) (*structs.PlanResult, error)
	writes      map[string][]*structs.EvalUpdateRequest
	plans       []*structs.Plan
	acked       chan structs.EvalAckRequest
	nacked      chan structs.EvalAckRequest
}

func newFakeWorkerServer(t *testing.T) *fakeWorkerServer {
	f := &fakeWorkerServer{
		store:  statetest.New(t),
		evals:  make(chan *structs.EvalDequeueResponse, 10),
		closed: make(chan struct{}),
		writes: map[string][]*structs.EvalUpdateRequest{},
		acked:  make(chan structs.EvalAckRequest, 10),
		nacked: make(chan structs.EvalAckRequest, 10),
	}
	return f
}

func (f *fakeWorkerServer) State() *state.StateStore { return f.store }
func (f *fakeWorkerServer) Now() time.Time           { return testEpoch }
func (f *fakeWorkerServer) Logger() hclog.Logger     { return hclog.NewNullLogger() }

func (f *fakeWorkerServer) RPC(method string, args, reply any) error {
	f.mu.Lock()
	f.calls = append(f.calls, method)
	f.mu.Unlock()
	switch method {
	case "Eval.Dequeue":
		req := args.(*structs.EvalDequeueRequest)
		for _, s := range req.Schedulers {
			if s == structs.JobTypeCore {
				return errors.New("worker asked for _core evals")
			}
		}
		f.mu.Lock()
		if f.dequeueErrs > 0 {
			f.dequeueErrs--
			f.mu.Unlock()
			return broker.ErrBrokerDisabled
		}
		f.mu.Unlock()
		select {
		case resp := <-f.evals:
			*reply.(*structs.EvalDequeueResponse) = *resp
		case <-f.closed:
		}
		return nil
	case "Eval.Ack":
		f.acked <- *args.(*structs.EvalAckRequest)
		return nil
	case "Eval.Nack":
		f.nacked <- *args.(*structs.EvalAckRequest)
		return nil
	case "Eval.Update", "Eval.Create", "Eval.Reblock":
		f.mu.Lock()
		f.writes[method] = append(f.writes[method], args.(*structs.EvalUpdateRequest))
		f.mu.Unlock()
		return nil
	case "Plan.Submit":
		plan := args.(*structs.PlanRequest).Plan
		f.mu.Lock()
		f.plans = append(f.plans, plan)
		fn := f.planResult
		f.mu.Unlock()
		res, err := fn(plan)
		reply.(*structs.PlanResponse).Result = res
		return err
	}
	return fmt.Errorf("unexpected RPC %s", method)
}

// standIn is a scheduler that runs a test function, registered only for
// these tests through the worker's options.
type standIn struct {
	cfg     scheduler.Config
	process func(cfg scheduler.Config, eval *structs.Evaluation) error
}

func (s *standIn) Process(eval *structs.Evaluation) error { return s.process(s.cfg, eval) }

func startTestWorker(t *testing.T, f *fakeWorkerServer, clock clock.Clock, process func(scheduler.Config, *structs.Evaluation) error) *Worker {
	t.Helper()
	w := newWorker(context.Background(), f, []string{"service", "batch", structs.JobTypeCore}, 1, workerOptions{
		clock:     clock,
		syncLimit: 5 * time.Second,
		newScheduler: func(jobType string, cfg scheduler.Config) (scheduler.Scheduler, error) {
			if jobType != "service" {
				return nil, fmt.Errorf("%w %q", scheduler.ErrUnknownScheduler, jobType)
			}
			return &standIn{cfg: cfg, process: process}, nil
		},
	})
	t.Cleanup(func() {
		close(f.closed)
		w.Stop()
	})
	return w
}

func workerEval(modifyIndex uint64) *structs.Evaluation {
	return testEval("web", 50, modifyIndex)
}

func TestWorker_AcksOnSuccessAndNacksOnError(t *testing.T) {
	f := newFakeWorkerServer(t)
	startTestWorker(t, f, nil, func(cfg scheduler.Config, e *structs.Evaluation) error {
		if e.JobID == "broken" {
			return errors.New("scheduler failed")
		}
		return nil
	})
	ok := workerEval(0)
	f.evals <- &structs.EvalDequeueResponse{Eval: ok, Token: "t1"}
	if got := <-f.acked; got.EvalID != ok.ID || got.Token != "t1" {
		t.Fatalf("ack %+v", got)
	}
	bad := workerEval(0)
	bad.JobID = "broken"
	f.evals <- &structs.EvalDequeueResponse{Eval: bad, Token: "t2"}
	if got := <-f.nacked; got.EvalID != bad.ID || got.Token != "t2" {
		t.Fatalf("nack %+v", got)
	}
	unknown := workerEval(0)
	unknown.Type = "batch" // no scheduler for it in this test
	f.evals <- &structs.EvalDequeueResponse{Eval: unknown, Token: "t3"}
	if got := <-f.nacked; got.EvalID != unknown.ID {
		t.Fatalf("nack %+v", got)
	}
}

func TestWorker_WaitsForStateToReachTheEvalIndex(t *testing.T) {
	f := newFakeWorkerServer(t)
	seen := make(chan uint64, 1)
	startTestWorker(t, f, nil, func(cfg scheduler.Config, e *structs.Evaluation) error {
		idx, err := cfg.State.LatestIndex()
		seen <- idx
		return err
	})
	if err := f.store.Write(5, func(tx *state.Txn) error { return tx.UpsertNode(testWorkerNode("n1"), nil) }); err != nil {
		t.Fatal(err)
	}
	f.evals <- &structs.EvalDequeueResponse{Eval: workerEval(8), Token: "t", WaitIndex: 10}
	select {
	case idx := <-seen:
		t.Fatalf("scheduled on a snapshot at %d before the state reached 10", idx)
	case <-f.acked:
		t.Fatal("acked before the state reached the eval")
	default:
	}
	if err := f.store.Write(10, func(tx *state.Txn) error { return tx.UpsertNode(testWorkerNode("n2"), nil) }); err != nil {
		t.Fatal(err)
	}
	if idx := <-seen; idx < 10 {
		t.Fatalf("scheduled on a snapshot at %d", idx)
	}
	<-f.acked
}

func TestWorker_NacksWhenStateNeverCatchesUp(t *testing.T) {
	f := newFakeWorkerServer(t)
	w := newWorker(context.Background(), f, []string{"service"}, 1, workerOptions{
		syncLimit: 10 * time.Millisecond,
		newScheduler: func(string, scheduler.Config) (scheduler.Scheduler, error) {
			t.Error("scheduler ran on a stale state")
			return nil, errors.New("unreachable")
		},
	})
	defer func() { close(f.closed); w.Stop() }()
	f.evals <- &structs.EvalDequeueResponse{Eval: workerEval(50), Token: "t"}
	<-f.nacked
}

func TestWorker_SubmitPlanRefreshesStateAfterPartialCommit(t *testing.T) {
	f := newFakeWorkerServer(t)
	if err := f.store.Write(15, func(tx *state.Txn) error { return tx.UpsertNode(testWorkerNode("n1"), nil) }); err != nil {
		t.Fatal(err)
	}
	f.planResult = func(plan *structs.Plan) (*structs.PlanResult, error) {
		if len(f.plans) == 1 {
			// Another plan committed at 20 took the node.
			if err := f.store.Write(20, func(tx *state.Txn) error { return tx.UpsertNode(testWorkerNode("n2"), nil) }); err != nil {
				return nil, err
			}
			return &structs.PlanResult{RejectedNodes: []string{"n1"}, RefreshIndex: 20}, nil
		}
		return &structs.PlanResult{AllocIndex: 21}, nil
	}
	type outcome struct {
		refreshed uint64
		second    scheduler.State
	}
	out := make(chan outcome, 1)
	startTestWorker(t, f, nil, func(cfg scheduler.Config, e *structs.Evaluation) error {
		plan := e.MakePlan(nil)
		plan.SnapshotIndex = 15
		_, newState, err := cfg.Planner.SubmitPlan(plan)
		if err != nil || newState == nil {
			return fmt.Errorf("first submit: state %v, err %v", newState, err)
		}
		idx, _ := newState.LatestIndex()
		_, second, err := cfg.Planner.SubmitPlan(e.MakePlan(nil))
		if err != nil {
			return err
		}
		out <- outcome{refreshed: idx, second: second}
		return nil
	})
	f.evals <- &structs.EvalDequeueResponse{Eval: workerEval(15), Token: "tok"}
	<-f.acked
	o := <-out
	if o.refreshed < 20 || o.second != nil {
		t.Fatalf("refreshed to %d, second submit returned state %v", o.refreshed, o.second)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.plans {
		if p.EvalToken != "tok" || p.SnapshotIndex == 0 {
			t.Fatalf("plan sent with token %q, snapshot index %d", p.EvalToken, p.SnapshotIndex)
		}
	}
	if f.plans[1].SnapshotIndex < 20 {
		t.Fatalf("plan after refresh claims snapshot %d", f.plans[1].SnapshotIndex)
	}
}

func TestWorker_EvalWritesCarryTokenAndSnapshotIndex(t *testing.T) {
	f := newFakeWorkerServer(t)
	if err := f.store.Write(7, func(tx *state.Txn) error { return tx.UpsertNode(testWorkerNode("n1"), nil) }); err != nil {
		t.Fatal(err)
	}
	startTestWorker(t, f, nil, func(cfg scheduler.Config, e *structs.Evaluation) error {
		blocked := e.CreateBlockedEval("blocked-1", map[string]bool{"c": true}, false, cfg.Now)
		if err := cfg.Planner.CreateEval(blocked); err != nil {
			return err
		}
		if blocked.SnapshotIndex != 0 {
			return errors.New("worker changed the scheduler's eval")
		}
		reblock := e.Copy()
		reblock.SnapshotIndex = 3
		if err := cfg.Planner.ReblockEval(reblock); err != nil {
			return err
		}
		done := e.Copy()
		done.Status = structs.EvalStatusComplete
		return cfg.Planner.UpdateEval(done)
	})
	f.evals <- &structs.EvalDequeueResponse{Eval: workerEval(7), Token: "tok"}
	<-f.acked
	f.mu.Lock()
	defer f.mu.Unlock()
	create, reblock, update := f.writes["Eval.Create"], f.writes["Eval.Reblock"], f.writes["Eval.Update"]
	if len(create) != 1 || len(reblock) != 1 || len(update) != 1 {
		t.Fatalf("writes %v", f.writes)
	}
	for _, w := range []*structs.EvalUpdateRequest{create[0], reblock[0], update[0]} {
		if w.EvalToken != "tok" {
			t.Fatalf("eval write without the token: %+v", w)
		}
	}
	if got := create[0].Evals[0].SnapshotIndex; got != 7 {
		t.Fatalf("created blocked eval has snapshot index %d, want the worker's 7", got)
	}
	if got := reblock[0].Evals[0].SnapshotIndex; got != 3 {
		t.Fatalf("reblocked eval snapshot index %d, want the scheduler's 3", got)
	}
}

func TestWorker_BacksOffOnDequeueErrors(t *testing.T) {
	f := newFakeWorkerServer(t)
	f.dequeueErrs = 2
	clock := clock.NewFake(testEpoch)
	startTestWorker(t, f, clock, func(scheduler.Config, *structs.Evaluation) error { return nil })
	f.evals <- &structs.EvalDequeueResponse{Eval: workerEval(0), Token: "t"}

	// First failure: 50ms backoff, second: 100ms.
	for _, d := range []time.Duration{workerBackoffBase, 2 * workerBackoffBase} {
		if !clock.WaitForTimers(1, 5*time.Second) {
			t.Fatal("worker is not backing off")
		}
		clock.Advance(d - time.Nanosecond)
		select {
		case <-f.acked:
			t.Fatal("worker retried before its backoff")
		default:
		}
		clock.Advance(time.Nanosecond)
	}
	<-f.acked
}

func TestWorker_PauseStopsTakingEvalsUntilResume(t *testing.T) {
	f := newFakeWorkerServer(t)
	started := make(chan struct{})
	release := make(chan struct{})
	w := startTestWorker(t, f, nil, func(scheduler.Config, *structs.Evaluation) error {
		started <- struct{}{}
		<-release
		return nil
	})
	f.evals <- &structs.EvalDequeueResponse{Eval: workerEval(0), Token: "t1"}
	<-started
	w.Pause() // while it runs an eval: it finishes that one
	close(release)
	<-f.acked
	f.evals <- &structs.EvalDequeueResponse{Eval: workerEval(0), Token: "t2"}
	// Paused: the second eval stays queued. Stop must not wait for it.
	f.mu.Lock()
	dequeues := 0
	for _, c := range f.calls {
		if c == "Eval.Dequeue" {
			dequeues++
		}
	}
	f.mu.Unlock()
	w.Resume()
	<-started
	if dequeues != 1 {
		t.Fatalf("a paused worker dequeued (%d dequeues)", dequeues)
	}
}

func testWorkerNode(id string) *structs.Node {
	return &structs.Node{ID: id, SecretID: "s-" + id, Status: structs.NodeStatusReady, SchedulingEligibility: structs.NodeSchedulingEligible}
}

// The server's reconnect report window reaches every scheduler it runs.
func TestWorker_PassesTheReconnectReportWindow(t *testing.T) {
	f := newFakeWorkerServer(t)
	got := make(chan time.Duration, 1)
	w := newWorker(context.Background(), f, []string{"service"}, 1, workerOptions{
		syncLimit:    5 * time.Second,
		reportWindow: 90 * time.Second,
		newScheduler: func(jobType string, cfg scheduler.Config) (scheduler.Scheduler, error) {
			return &standIn{cfg: cfg, process: func(cfg scheduler.Config, _ *structs.Evaluation) error {
				got <- cfg.ReconnectReportWindow
				return nil
			}}, nil
		},
	})
	t.Cleanup(func() {
		close(f.closed)
		w.Stop()
	})
	f.evals <- &structs.EvalDequeueResponse{Eval: workerEval(0), Token: "t"}
	if d := <-got; d != 90*time.Second {
		t.Fatalf("scheduler got ReconnectReportWindow %v, want 90s", d)
	}
}

func TestServer_WorkersUseTheConfiguredReconnectReportWindow(t *testing.T) {
	s := testServer(t, func(c *Config) { c.ReconnectReportWindow = 42 * time.Second })
	if len(s.workers) == 0 {
		t.Fatal("no workers started")
	}
	for _, w := range s.workers {
		if w.opts.reportWindow != 42*time.Second {
			t.Fatalf("worker report window %v, want 42s", w.opts.reportWindow)
		}
	}
}
