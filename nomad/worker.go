package nomad

// A Worker runs evaluations on one server: it takes an eval from the
// leader's broker, waits until its local state store has caught up with
// the eval, runs the scheduler for the job's type on a snapshot, and
// reports back. Every server runs NumSchedulers workers; a follower's
// workers reach the leader through RPC forwarding.
//
// # RPCs the worker calls (srv.RPC routes them to the leader)
//
//   - Eval.Dequeue(structs.EvalDequeueRequest{Schedulers, Timeout,
//     SchedulerVersion}) -> structs.EvalDequeueResponse{Eval, Token,
//     WaitIndex}. A long poll: the endpoint calls EvalBroker.Dequeue with a
//     context that ends after Timeout and, if it ends with nothing, answers
//     with Eval nil and no error. WaitIndex is the raft index the worker's
//     state must reach before scheduling: at least the index at which the
//     eval was last written (the worker also waits for Eval.ModifyIndex).
//     A disabled broker (not leader) is an error; the worker backs off.
//   - Eval.Ack / Eval.Nack(structs.EvalAckRequest{EvalID, Token}) ->
//     structs.GenericResponse: EvalBroker.Ack / Nack. Ack after the
//     scheduler returned nil (it has already written the eval's outcome
//     with Eval.Update), Nack after any error.
//   - Eval.Update(structs.EvalUpdateRequest{Evals, EvalToken}) ->
//     structs.GenericResponse: EvalToken must be outstanding
//     (EvalBroker.OutstandingToken gives the eval it holds; the evals
//     written may be that eval, or others the scheduler cancels). The
//     endpoint calls OutstandingReset for the held eval (the worker is
//     making progress) and writes the evals through raft.
//   - Eval.Create(structs.EvalUpdateRequest{Evals, EvalToken}): as Update,
//     for new evals (follow-ups, blocked evals); the FSM enqueues pending
//     ones and parks blocked ones. The worker sets SnapshotIndex on a
//     created eval that has none, so BlockedEvals can tell whether it
//     missed an unblock.
//   - Eval.Reblock(structs.EvalUpdateRequest{Evals: [eval], EvalToken}):
//     the held eval, still blocked, goes back to BlockedEvals with
//     BlockedEvals.Reblock(eval, token) after its new fields (class
//     eligibility, snapshot index) are written through raft. The worker
//     acks it right after.
//   - Plan.Submit(structs.PlanRequest{Plan}) -> structs.PlanResponse{Result}:
//     Plan.EvalToken must be outstanding for Plan.EvalID; the endpoint
//     calls PauseNackTimeout, planner.Queue.Enqueue, waits on the future,
//     ResumeNackTimeout, and returns the result (or the error).
//
// Workers never ask for the _core type (structs.JobTypeCore), which is
// the eval type of Nomad's garbage collector: Drover's leader collects
// garbage in a loop of its own (runCoreGC, core_gc_loop.go), without
// evaluations, so no eval of that type is ever enqueued. newWorker drops
// it from the types it is given even when EnabledSchedulers lists it.

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler"
	"github.com/drover-sched/drover/structs"
)

const (
	// workerDequeueTimeout bounds one Eval.Dequeue long poll, and so how
	// long Stop may wait for a worker.
	workerDequeueTimeout = 500 * time.Millisecond
	// workerSyncLimit bounds the wait for the local state to reach an
	// eval's index or a plan's refresh index.
	workerSyncLimit    = 5 * time.Second
	workerBackoffBase  = 50 * time.Millisecond
	workerBackoffLimit = 5 * time.Second
)

// workerServer is what a Worker needs from its server.
type workerServer interface {
	// RPC calls a method on the leader (Eval.Dequeue, Eval.Ack, Eval.Nack,
	// Eval.Update, Eval.Create, Eval.Reblock, Plan.Submit).
	RPC(method string, args any, reply any) error
	State() *state.StateStore
	Now() time.Time
	Logger() hclog.Logger
}

// workerOptions tune a worker. The server sets the report window; tests
// also replace the clock, the scheduler factory and the sync limit. A
// field left unset takes the default newWorker gives it.
type workerOptions struct {
	clock        clock.Clock
	newScheduler func(jobType string, cfg scheduler.Config) (scheduler.Scheduler, error)
	syncLimit    time.Duration
	// reportWindow is the server's ReconnectReportWindow, handed to every
	// scheduler.
	reportWindow time.Duration
	// metrics receives the worker's timers and its count of failed
	// placements; nil drops them.
	metrics *metrics.Metrics
}

// Worker runs evaluations. It implements scheduler.Planner for the
// scheduler it runs. The goroutine NewWorker starts owns the per-eval
// fields; Stop waits for it.
type Worker struct {
	srv        workerServer
	logger     hclog.Logger
	schedulers []string
	opts       workerOptions

	cancel context.CancelFunc
	ctx    context.Context
	done   chan struct{}

	pauseMu sync.Mutex
	paused  bool
	resumed chan struct{} // closed by Resume while paused

	// The eval being processed, touched only by the worker goroutine
	// (the scheduler calls the Planner methods on it).
	evalToken     string
	snapshotIndex uint64
}

// NewWorker starts a worker that runs evals of the given scheduler types
// until ctx ends or Stop is called.
func NewWorker(ctx context.Context, srv workerServer, schedulers []string, id int) *Worker {
	return newWorker(ctx, srv, schedulers, id, workerOptions{})
}

func newWorker(ctx context.Context, srv workerServer, schedulers []string, id int, opts workerOptions) *Worker {
	if opts.clock == nil {
		opts.clock = clock.Real()
	}
	if opts.newScheduler == nil {
		opts.newScheduler = scheduler.NewScheduler
	}
	if opts.syncLimit <= 0 {
		opts.syncLimit = workerSyncLimit
	}
	opts.metrics = telemetry.OrDiscard(opts.metrics)
	var types []string
	for _, s := range schedulers {
		if s != structs.JobTypeCore { // see the comment at the top of this file
			types = append(types, s)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Worker{
		srv:        srv,
		logger:     srv.Logger().Named("worker").With("worker_id", id),
		schedulers: types,
		opts:       opts,
		ctx:        ctx,
		cancel:     cancel,
		done:       make(chan struct{}),
	}
	go func() {
		defer close(w.done)
		w.run()
	}()
	return w
}

// Pause makes the worker stop taking evals once the current one is done
// (the leader pauses some of its own workers to keep CPU for its loops).
func (w *Worker) Pause() {
	w.pauseMu.Lock()
	defer w.pauseMu.Unlock()
	if !w.paused {
		w.paused = true
		w.resumed = make(chan struct{})
	}
}

// Resume lets a paused worker take evals again.
func (w *Worker) Resume() {
	w.pauseMu.Lock()
	defer w.pauseMu.Unlock()
	if w.paused {
		w.paused = false
		close(w.resumed)
	}
}

// Stop ends the worker and waits for it: after the eval it is processing,
// or after its current long poll.
func (w *Worker) Stop() {
	w.cancel()
	<-w.done
}

// waitWhilePaused blocks while paused and reports whether to go on.
func (w *Worker) waitWhilePaused() bool {
	w.pauseMu.Lock()
	paused, resumed := w.paused, w.resumed
	w.pauseMu.Unlock()
	if paused {
		select {
		case <-resumed:
		case <-w.ctx.Done():
		}
	}
	return w.ctx.Err() == nil
}

func (w *Worker) run() {
	var backoff time.Duration
	for w.waitWhilePaused() {
		var resp structs.EvalDequeueResponse
		start := time.Now()
		err := w.srv.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{
			Schedulers: w.schedulers,
			Timeout:    workerDequeueTimeout,
		}, &resp)
		if err != nil {
			if w.ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, workerBackoffBase), workerBackoffLimit)
			w.logger.Warn("failed to dequeue an eval, backing off", "error", err, "backoff", backoff)
			if !clock.Sleep(w.ctx, w.opts.clock, backoff) {
				return
			}
			continue
		}
		backoff = 0
		if resp.Eval == nil {
			continue // the long poll ended with nothing to do
		}
		w.opts.metrics.MeasureSince(keyWorkerDequeue, start)
		w.process(resp.Eval, resp.Token, resp.GetWaitIndex())
	}
}

// process runs one eval and acks or nacks it.
func (w *Worker) process(eval *structs.Evaluation, token string, waitIndex uint64) {
	logger := w.logger.With("eval_id", eval.ID, "job_id", eval.JobID, "type", eval.Type)
	w.evalToken, w.snapshotIndex = token, 0
	defer func() { w.evalToken, w.snapshotIndex = "", 0 }()

	err := w.schedule(eval, waitIndex, logger)
	method := "Eval.Ack"
	if err != nil {
		logger.Error("eval failed, nacking", "error", err)
		method = "Eval.Nack"
	}
	var reply structs.GenericResponse
	if err := w.srv.RPC(method, &structs.EvalAckRequest{EvalID: eval.ID, Token: token}, &reply); err != nil {
		// The broker's nack timeout redelivers the eval.
		logger.Error("failed to "+method[len("Eval."):]+" eval", "error", err)
	}
}

func (w *Worker) schedule(eval *structs.Evaluation, waitIndex uint64, logger hclog.Logger) error {
	snap, err := w.snapshotMinIndex(waitIndex)
	if err != nil {
		return err
	}
	sched, err := w.opts.newScheduler(eval.Type, scheduler.Config{
		Logger:  logger,
		State:   snap,
		Planner: w,
		Now:     w.srv.Now(),

		ReconnectReportWindow: w.opts.reportWindow,
	})
	if err != nil {
		return err
	}
	defer w.opts.metrics.MeasureSince(invokeSchedulerKey(eval.Type), time.Now())
	return sched.Process(eval)
}

// snapshotMinIndex waits for the local state to reach index and returns a
// snapshot, remembering its index.
func (w *Worker) snapshotMinIndex(index uint64) (*state.StateSnapshot, error) {
	ctx, cancel := context.WithTimeout(w.ctx, w.opts.syncLimit)
	defer cancel()
	defer w.opts.metrics.MeasureSince(keyWorkerWaitForIndex, time.Now())
	snap, err := w.srv.State().SnapshotMinIndex(ctx, index)
	if err != nil {
		return nil, fmt.Errorf("worker: waiting for state index %d: %w", index, err)
	}
	if w.snapshotIndex, err = snap.LatestIndex(); err != nil {
		return nil, err
	}
	return snap, nil
}

// SubmitPlan implements scheduler.Planner: it sends the plan to the
// leader's plan applier and, if part of it was refused, returns a snapshot
// at least as new as the result's RefreshIndex to plan again on.
func (w *Worker) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, scheduler.State, error) {
	plan.EvalToken = w.evalToken
	if plan.SnapshotIndex == 0 {
		plan.SnapshotIndex = w.snapshotIndex
	}
	// The job travels once, not with every allocation, and a plan too
	// large for one message goes in parts (see planner.Split).
	parts, err := planner.Split(plan.Normalized(), planner.PartBudget)
	if err != nil {
		return nil, nil, err
	}
	var result *structs.PlanResult
	start := time.Now()
	for _, part := range parts {
		var resp structs.PlanResponse
		if err := w.srv.RPC("Plan.Submit", &structs.PlanRequest{Plan: part}, &resp); err != nil {
			return nil, nil, fmt.Errorf("submitting plan for eval %s: %w", structs.ShortID(plan.EvalID), err)
		}
		if resp.Result == nil {
			return nil, nil, fmt.Errorf("submitting plan for eval %s: leader returned no result", structs.ShortID(plan.EvalID))
		}
		result = planner.MergeResults(result, resp.Result)
		w.opts.metrics.MeasureSince(keyWorkerSubmitPlan, start)
		if resp.Result.RefreshIndex != 0 {
			// Part of this part was refused: the scheduler plans again
			// on fresher state for everything not committed, the later
			// parts included.
			break
		}
	}
	if result.RefreshIndex == 0 {
		return result, nil, nil
	}
	snap, err := w.snapshotMinIndex(result.RefreshIndex)
	if err != nil {
		return nil, nil, err
	}
	return result, snap, nil
}

// UpdateEval implements scheduler.Planner. The eval the scheduler writes
// last records the placements it could not make (FailedTGAllocs: one
// AllocMetric per group, with the others that failed alike coalesced).
func (w *Worker) UpdateEval(eval *structs.Evaluation) error {
	defer w.opts.metrics.MeasureSince(keyWorkerUpdateEval, time.Now())
	failed := 0
	for _, m := range eval.FailedTGAllocs {
		if m != nil {
			failed += 1 + m.CoalescedFailures
		}
	}
	if failed > 0 {
		w.opts.metrics.IncrCounterWithLabels(keyWorkerPlacementsFailed, float32(failed),
			[]metrics.Label{{Name: "namespace", Value: eval.Namespace}}) // no job: see evalLabels
	}
	return w.writeEvals("Eval.Update", eval)
}

// CreateEval implements scheduler.Planner.
func (w *Worker) CreateEval(eval *structs.Evaluation) error {
	return w.writeEvals("Eval.Create", w.withSnapshotIndex(eval))
}

// ReblockEval implements scheduler.Planner.
func (w *Worker) ReblockEval(eval *structs.Evaluation) error {
	return w.writeEvals("Eval.Reblock", w.withSnapshotIndex(eval))
}

// withSnapshotIndex stamps the worker's snapshot index on an eval that has
// none: a blocked eval must say what state its scheduler saw.
func (w *Worker) withSnapshotIndex(eval *structs.Evaluation) *structs.Evaluation {
	if eval.SnapshotIndex != 0 {
		return eval
	}
	c := eval.Copy()
	c.SnapshotIndex = w.snapshotIndex
	return c
}

func (w *Worker) writeEvals(method string, eval *structs.Evaluation) error {
	var reply structs.GenericResponse
	req := &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}, EvalToken: w.evalToken}
	if err := w.srv.RPC(method, req, &reply); err != nil {
		return fmt.Errorf("%s of eval %s: %w", method, structs.ShortID(eval.ID), err)
	}
	return nil
}

var _ scheduler.Planner = (*Worker)(nil)
