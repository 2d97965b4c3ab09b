package broker

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// EvalWriter commits evals through raft. The leader implements it with the
// same raft entry Eval.Update uses, so the FSM enqueues what it writes.
type EvalWriter interface {
	UpsertEvals(evals []*structs.Evaluation) error
}

const (
	// failedFollowUpBaseWait is the default least wait before the
	// follow-up of a failed eval runs: late enough that whatever made the
	// eval fail repeatedly (a bug, an overloaded leader) may have passed.
	// Follow-ups are spread over four more such waits so that a burst of
	// failures does not retry as one.
	failedFollowUpBaseWait = time.Minute
	failedFollowUpSpread   = 4

	reaperMinBackoff = 250 * time.Millisecond
	reaperMaxBackoff = 30 * time.Second
)

// ReapFailedEvals is a leader loop: it takes each eval that reached the
// broker's delivery limit, marks it failed, and writes a follow-up eval
// that retries the job later, so no eval is silently dropped. The eval is
// acked only once both are committed; if the write fails the eval goes back
// to the failed queue after a backoff. It returns when ctx is done.
func ReapFailedEvals(ctx context.Context, broker *EvalBroker, writer EvalWriter) {
	clk := broker.cfg.Clock
	backoff := reaperMinBackoff
	for {
		eval, token, err := broker.Dequeue(ctx, []string{failedQueue})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Disabled: leadership is being given up and ctx will end soon.
			if !clock.Sleep(ctx, clk, reaperMaxBackoff) {
				return
			}
			continue
		}
		now := clk.Now()
		failed := eval.Copy()
		failed.Status = structs.EvalStatusFailed
		failed.StatusDescription = fmt.Sprintf("evaluation reached delivery limit (%d)", broker.cfg.DeliveryLimit)
		followUp := eval.CreateFailedFollowUpEval(structs.GenerateUUID(), failedFollowUpWait(eval.ID, broker.cfg.FailedFollowUpDelay), now)
		failed.NextEval = followUp.ID
		failed.ModifyTime = now.UnixNano()
		if err := writer.UpsertEvals([]*structs.Evaluation{failed, followUp}); err != nil {
			broker.cfg.Logger.Error("failed to mark eval failed, will retry", "eval_id", eval.ID, "error", err, "backoff", backoff)
			ok := clock.Sleep(ctx, clk, backoff)
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
func failedFollowUpWait(evalID string, base time.Duration) time.Duration {
	h := fnv.New64a()
	_, _ = h.Write([]byte(evalID))
	return base + time.Duration(h.Sum64()%uint64(failedFollowUpSpread*base))
}

const (
	// cancelBatch bounds one raft entry of canceled evals.
	cancelBatch = 256
	// cancelPollInterval is how often the broker's superseded evals are
	// collected; BlockedEvals' duplicates wake the loop at once.
	cancelPollInterval = 5 * time.Second
)

// ReapCancelableEvals is a leader loop that marks canceled the evals the
// broker (superseded pending evals of a job) and BlockedEvals (replaced or
// untracked blocked evals) no longer run, so they do not stay pending or
// blocked in the state store and come back at the next leader election.
// Evals whose write failed are retried after a backoff. It returns when ctx
// is done.
func ReapCancelableEvals(ctx context.Context, broker *EvalBroker, blocked *BlockedEvals, writer EvalWriter) {
	clk := broker.cfg.Clock
	var carry []*structs.Evaluation
	backoff := reaperMinBackoff
	for {
		dups, wake := blocked.takeDuplicates()
		evals := append(carry, dups...)
		evals = append(evals, broker.Cancelable(cancelBatch)...)
		carry = nil
		if len(evals) == 0 {
			t := clk.NewTimer(cancelPollInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-wake:
			case <-t.C():
			}
			t.Stop()
			continue
		}
		now := clk.Now()
		for start := 0; start < len(evals); start += cancelBatch {
			chunk := evals[start:min(start+cancelBatch, len(evals))]
			canceled := make([]*structs.Evaluation, len(chunk))
			for i, e := range chunk {
				c := e.Copy()
				c.Status = structs.EvalStatusCancelled
				c.StatusDescription = "canceled: superseded by a newer evaluation of the job"
				c.ModifyTime = now.UnixNano()
				canceled[i] = c
			}
			if err := writer.UpsertEvals(canceled); err != nil {
				broker.cfg.Logger.Error("failed to cancel superseded evals, will retry", "count", len(evals)-start, "error", err)
				carry = evals[start:]
				break
			}
		}
		if carry == nil {
			backoff = reaperMinBackoff
			continue
		}
		if !clock.Sleep(ctx, clk, backoff) {
			return
		}
		backoff = min(2*backoff, reaperMaxBackoff)
	}
}

// PeriodicUnblockFailed is a leader loop that retries, every interval, the
// evals parked after running out of plan attempts.
func PeriodicUnblockFailed(ctx context.Context, blocked *BlockedEvals, clk clock.Clock, interval time.Duration) {
	for clock.Sleep(ctx, clk, interval) {
		blocked.UnblockFailed()
	}
}
