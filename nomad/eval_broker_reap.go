package nomad

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/drover-sched/drover/structs"
)

// evalWriter commits evals through raft. The leader implements it with the
// same raft entry Eval.Update uses, so the FSM enqueues what it writes.
type evalWriter interface {
	UpsertEvals(evals []*structs.Evaluation) error
}

const (
	// failedFollowUpBaseWait and failedFollowUpSpread set when the
	// follow-up of a failed eval runs: late enough that whatever made the
	// eval fail repeatedly (a bug, a overloaded leader) may have passed,
	// and spread per eval so a burst of failures does not retry as one.
	failedFollowUpBaseWait = time.Minute
	failedFollowUpSpread   = 4 * time.Minute

	reaperMinBackoff = 250 * time.Millisecond
	reaperMaxBackoff = 30 * time.Second
)

// reapFailedEvals is a leader loop: it takes each eval that reached the
// broker's delivery limit, marks it failed, and writes a follow-up eval
// that retries the job later, so no eval is silently dropped. The eval is
// acked only once both are committed; if the write fails the eval goes back
// to the failed queue after a backoff. It returns when ctx is done.
func reapFailedEvals(ctx context.Context, broker *EvalBroker, writer evalWriter) {
	clock := broker.cfg.Clock
	backoff := reaperMinBackoff
	for {
		eval, token, err := broker.Dequeue(ctx, []string{failedQueue})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Disabled: leadership is being given up and ctx will end soon.
			if !sleepCtx(ctx, clock, reaperMaxBackoff) {
				return
			}
			continue
		}
		now := clock.Now()
		failed := eval.Copy()
		failed.Status = structs.EvalStatusFailed
		failed.StatusDescription = fmt.Sprintf("evaluation reached delivery limit (%d)", broker.cfg.DeliveryLimit)
		followUp := eval.CreateFailedFollowUpEval(structs.GenerateUUID(), failedFollowUpWait(eval.ID), now)
		failed.NextEval = followUp.ID
		failed.ModifyTime = now.UnixNano()
		if err := writer.UpsertEvals([]*structs.Evaluation{failed, followUp}); err != nil {
			broker.cfg.Logger.Error("failed to mark eval failed, will retry", "eval_id", eval.ID, "error", err, "backoff", backoff)
			ok := sleepCtx(ctx, clock, backoff)
			if err := broker.Nack(eval.ID, token); err != nil && !errors.Is(err, ErrNotOutstanding) {
				broker.cfg.Logger.Error("failed to nack failed eval", "eval_id", eval.ID, "error", err)
			}
			if !ok {
				return
			}
			backoff = min(2*backoff, reaperMaxBackoff)
			continue
		}
		backoff = reaperMinBackoff
		if err := broker.Ack(eval.ID, token); err != nil {
			broker.cfg.Logger.Error("failed to ack failed eval", "eval_id", eval.ID, "error", err)
		}
	}
}

// failedFollowUpWait spreads follow-ups by a hash of the eval ID, so the
// delay is reproducible for a given eval without a random source.
func failedFollowUpWait(evalID string) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(evalID))
	return failedFollowUpBaseWait + time.Duration(h.Sum64()%uint64(failedFollowUpSpread))
}

// sleepCtx waits d on clock and reports whether ctx is still live.
func sleepCtx(ctx context.Context, clock Clock, d time.Duration) bool {
	t := clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
		return false
	}
}
