package broker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

var testEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func testBrokerConfig(clock clock.Clock) EvalBrokerConfig {
	return EvalBrokerConfig{
		Clock:               clock,
		NackTimeout:         5 * time.Second,
		InitialNackDelay:    time.Second,
		SubsequentNackDelay: 10 * time.Second,
		DeliveryLimit:       3,
	}
}

func newTestBroker(t *testing.T) (*EvalBroker, *clock.Fake) {
	t.Helper()
	clock := clock.NewFake(testEpoch)
	b, err := NewEvalBroker(testBrokerConfig(clock))
	if err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(true)
	return b, clock
}

func testEval(jobID string, priority int, index uint64) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   "default",
		Priority:    priority,
		Type:        "service",
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       jobID,
		Status:      structs.EvalStatusPending,
		CreateIndex: index,
		ModifyIndex: index,
	}
}

// tryDequeue takes a ready eval without blocking: a canceled context makes
// Dequeue return as soon as it finds nothing.
func tryDequeue(t *testing.T, b *EvalBroker, schedulers ...string) (*structs.Evaluation, string) {
	t.Helper()
	if len(schedulers) == 0 {
		schedulers = []string{"service"}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e, tok, err := b.Dequeue(ctx, schedulers)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("dequeue: %v", err)
	}
	return e, tok
}

func mustDequeue(t *testing.T, b *EvalBroker, want *structs.Evaluation, schedulers ...string) string {
	t.Helper()
	got, tok := tryDequeue(t, b, schedulers...)
	if got == nil {
		t.Fatalf("nothing ready, want eval %s", want.JobID)
	}
	if got.ID != want.ID {
		t.Fatalf("dequeued eval of job %s (prio %d), want job %s (prio %d)", got.JobID, got.Priority, want.JobID, want.Priority)
	}
	return tok
}

func mustEmpty(t *testing.T, b *EvalBroker, schedulers ...string) {
	t.Helper()
	if got, _ := tryDequeue(t, b, schedulers...); got != nil {
		t.Fatalf("dequeued eval of job %s, want nothing ready", got.JobID)
	}
}

func TestBroker_RunsHigherPriorityThenOlderFirst(t *testing.T) {
	b, _ := newTestBroker(t)
	low := testEval("low", 10, 1)
	highNew := testEval("high-new", 80, 5)
	highOld := testEval("high-old", 80, 3)
	batch := testEval("batch", 90, 4)
	batch.Type = "batch"
	for _, e := range []*structs.Evaluation{low, highNew, highOld, batch} {
		b.Enqueue(e)
	}
	mustDequeue(t, b, highOld)
	mustDequeue(t, b, highNew)
	mustDequeue(t, b, batch, "service", "batch")
	mustDequeue(t, b, low, "service", "batch")
	mustEmpty(t, b, "service", "batch")
}

func TestBroker_DequeueOnlyServesRequestedSchedulers(t *testing.T) {
	b, _ := newTestBroker(t)
	e := testEval("a", 50, 1)
	e.Type = "system"
	b.Enqueue(e)
	mustEmpty(t, b, "service", "batch")
	mustDequeue(t, b, e, "system")
}

func TestBroker_OneOutstandingEvalPerJobAndNewestPendingWins(t *testing.T) {
	b, _ := newTestBroker(t)
	first := testEval("web", 50, 1)
	older := testEval("web", 50, 2)
	newest := testEval("web", 50, 4)
	middle := testEval("web", 50, 3)
	other := testEval("db", 50, 5)
	for _, e := range []*structs.Evaluation{first, older, newest, middle, other} {
		b.Enqueue(e)
	}
	if s := b.Stats(); s.TotalReady != 2 || s.TotalBlocked != 3 {
		t.Fatalf("ready=%d blocked=%d, want 2 ready (one per job) and 3 waiting", s.TotalReady, s.TotalBlocked)
	}
	tok := mustDequeue(t, b, first)
	otherTok := mustDequeue(t, b, other)
	mustEmpty(t, b) // web is busy; its later evals wait
	if got := b.Cancelable(10); len(got) != 0 {
		t.Fatalf("cancelable before ack: %d", len(got))
	}

	if err := b.Ack(first.ID, tok); err != nil {
		t.Fatal(err)
	}
	tok = mustDequeue(t, b, newest)
	mustEmpty(t, b)
	got := b.Cancelable(1)
	got = append(got, b.Cancelable(10)...)
	if len(got) != 2 || got[0].ID == newest.ID || got[1].ID == newest.ID {
		t.Fatalf("cancelable = %v, want the two superseded evals", got)
	}
	if err := b.Ack(newest.ID, tok); err != nil {
		t.Fatal(err)
	}
	if err := b.Ack(other.ID, otherTok); err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.TotalReady+s.TotalBlocked+s.TotalUnacked != 0 {
		t.Fatalf("broker not empty: %+v", s)
	}
	// A superseded eval may be enqueued again (the leader restores it
	// from state before it was canceled): it is no longer tracked.
	b.Enqueue(older)
	mustDequeue(t, b, older)
}

func TestBroker_EnqueueIgnoresTrackedEval(t *testing.T) {
	b, _ := newTestBroker(t)
	e := testEval("web", 50, 1)
	b.Enqueue(e)
	b.Enqueue(e)
	tok := mustDequeue(t, b, e)
	b.Enqueue(e) // the FSM replays it while a worker holds it
	mustEmpty(t, b)
	if err := b.Ack(e.ID, tok); err != nil {
		t.Fatal(err)
	}
}

func TestBroker_AckAndNackNeedTheDeliveryToken(t *testing.T) {
	b, _ := newTestBroker(t)
	e := testEval("web", 50, 1)
	b.Enqueue(e)
	tok := mustDequeue(t, b, e)
	if err := b.Ack(e.ID, "wrong"); !errors.Is(err, structs.ErrTokenMismatch) {
		t.Fatalf("ack with wrong token: %v", err)
	}
	if err := b.Nack("missing", tok); !errors.Is(err, ErrNotOutstanding) {
		t.Fatalf("nack of unknown eval: %v", err)
	}
	if got, ok := b.Outstanding(e.ID); !ok || got != tok {
		t.Fatalf("outstanding = %q,%v", got, ok)
	}
	if id, ok := b.OutstandingToken(tok); !ok || id != e.ID {
		t.Fatalf("outstanding token = %q,%v", id, ok)
	}
	if _, ok := b.OutstandingToken("wrong"); ok {
		t.Fatal("unknown token is outstanding")
	}
	if err := b.Ack(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	if err := b.Ack(e.ID, tok); !errors.Is(err, ErrNotOutstanding) {
		t.Fatalf("second ack: %v", err)
	}
}

func TestBroker_NackRedeliversAfterDelay(t *testing.T) {
	b, clock := newTestBroker(t)
	e := testEval("web", 50, 1)
	b.Enqueue(e)
	tok := mustDequeue(t, b, e)
	if err := b.Nack(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.TotalWaiting != 1 {
		t.Fatalf("waiting = %d, want 1", s.TotalWaiting)
	}
	clock.Advance(time.Second - time.Nanosecond)
	mustEmpty(t, b)
	clock.Advance(time.Nanosecond) // InitialNackDelay
	tok2 := mustDequeue(t, b, e)
	if tok2 == tok {
		t.Fatal("redelivery reused the token")
	}
	if err := b.Nack(e.ID, tok2); err != nil {
		t.Fatal(err)
	}
	clock.Advance(9 * time.Second)
	mustEmpty(t, b)
	clock.Advance(time.Second) // SubsequentNackDelay
	mustDequeue(t, b, e)
}

func TestBroker_UnackedEvalIsNackedAfterTimeout(t *testing.T) {
	b, clock := newTestBroker(t)
	e := testEval("web", 50, 1)
	b.Enqueue(e)
	tok := mustDequeue(t, b, e)

	clock.Advance(4 * time.Second)
	if err := b.OutstandingReset(e.ID, tok); err != nil { // worker heartbeat
		t.Fatal(err)
	}
	clock.Advance(4 * time.Second)
	if _, ok := b.Outstanding(e.ID); !ok {
		t.Fatal("heartbeat did not restart the nack timeout")
	}
	if err := b.PauseNackTimeout(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour) // a slow plan commit
	if _, ok := b.Outstanding(e.ID); !ok {
		t.Fatal("nacked while the nack timeout was paused")
	}
	if err := b.ResumeNackTimeout(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5 * time.Second)
	if _, ok := b.Outstanding(e.ID); ok {
		t.Fatal("still outstanding after the nack timeout")
	}
	if err := b.Ack(e.ID, tok); !errors.Is(err, ErrNotOutstanding) {
		t.Fatalf("late ack: %v", err)
	}
	clock.Advance(time.Second)
	mustDequeue(t, b, e)
}

type fakeEvalWriter struct {
	mu     sync.Mutex
	fail   error
	writes [][]*structs.Evaluation
	wrote  chan struct{}
}

func (w *fakeEvalWriter) UpsertEvals(evals []*structs.Evaluation) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.wrote <- struct{}{} }()
	if w.fail != nil {
		return w.fail
	}
	w.writes = append(w.writes, evals)
	return nil
}

func TestBroker_DeliveryLimitSendsEvalToFailedQueueAndReaperFollowsUp(t *testing.T) {
	b, clock := newTestBroker(t)
	e := testEval("web", 50, 1)
	later := testEval("web", 50, 2)
	b.Enqueue(e)
	b.Enqueue(later)
	for i := 0; i < 3; i++ {
		tok := mustDequeue(t, b, e)
		if err := b.Nack(e.ID, tok); err != nil {
			t.Fatal(err)
		}
		clock.Advance(10 * time.Second)
	}
	mustEmpty(t, b) // the job stays busy while its eval is in the failed queue
	if s := b.Stats(); s.TotalFailed != 1 || s.TotalReady != 0 {
		t.Fatalf("stats %+v, want one failed eval", s)
	}

	w := &fakeEvalWriter{fail: errors.New("not leader"), wrote: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ReapFailedEvals(ctx, b, w)
	}()
	defer func() { cancel(); <-done }()

	// The first write fails: the reaper backs off and retries.
	<-w.wrote
	if !clock.WaitForTimers(2, 5*time.Second) { // nack timeout + backoff
		t.Fatal("reaper did not back off")
	}
	w.mu.Lock()
	w.fail = nil
	w.mu.Unlock()
	clock.Advance(reaperMinBackoff)
	<-w.wrote

	w.mu.Lock()
	write := w.writes[0]
	w.mu.Unlock()
	if len(write) != 2 {
		t.Fatalf("reaper wrote %d evals, want the failed eval and its follow-up", len(write))
	}
	failed, follow := write[0], write[1]
	if failed.ID != e.ID || failed.Status != structs.EvalStatusFailed || failed.NextEval != follow.ID {
		t.Fatalf("failed eval = %+v", failed)
	}
	if follow.Status != structs.EvalStatusPending || follow.TriggeredBy != structs.EvalTriggerFailedFollowUp ||
		follow.PreviousEval != e.ID || follow.JobID != "web" || follow.Wait < failedFollowUpBaseWait ||
		!follow.WaitUntil.Equal(clock.Now().Add(follow.Wait)) {
		t.Fatalf("follow-up eval = %+v", follow)
	}
	if e.Status != structs.EvalStatusPending {
		t.Fatal("reaper changed the broker's copy of the eval")
	}
	// Once acked the job's next eval runs.
	// Dequeue itself waits until an eval is ready.
	waitCtx, stopWaiting := context.WithTimeout(context.Background(), 5*time.Second)
	defer stopWaiting()
	got, _, err := b.Dequeue(waitCtx, []string{"service"})
	if err != nil {
		t.Fatal("the failed eval was never acked")
	}
	if got.ID != later.ID {
		t.Fatalf("dequeued %s, want the job's next eval", got.ID)
	}
}

func TestBroker_DelayedEvalWaitsForItsTime(t *testing.T) {
	b, clock := newTestBroker(t)
	soon := testEval("a", 50, 1)
	soon.WaitUntil = testEpoch.Add(time.Minute)
	later := testEval("b", 50, 2)
	later.WaitUntil = testEpoch.Add(2 * time.Minute)
	past := testEval("c", 50, 3)
	past.WaitUntil = testEpoch.Add(-time.Minute)
	b.Enqueue(later)
	b.Enqueue(soon)
	b.Enqueue(past)
	if s := b.Stats(); len(s.DelayedEvals) != 2 || s.DelayedEvals[soon.ID] == nil {
		t.Fatalf("delayed = %v", s.DelayedEvals)
	}
	ack := func(e *structs.Evaluation, tok string) {
		t.Helper()
		if err := b.Ack(e.ID, tok); err != nil {
			t.Fatal(err)
		}
	}
	ack(past, mustDequeue(t, b, past))
	mustEmpty(t, b)
	clock.Advance(time.Minute)
	ack(soon, mustDequeue(t, b, soon))
	mustEmpty(t, b)
	clock.Advance(time.Minute)
	mustDequeue(t, b, later)
	if s := b.Stats(); len(s.DelayedEvals) != 0 {
		t.Fatalf("delayed = %v after release", s.DelayedEvals)
	}
}

func TestBroker_DisableEmptiesAndReenableRestores(t *testing.T) {
	b, clock := newTestBroker(t)
	held := testEval("a", 50, 1)
	waiting := testEval("a", 50, 2)
	delayed := testEval("b", 50, 3)
	delayed.WaitUntil = testEpoch.Add(time.Minute)
	b.Enqueue(held)
	b.Enqueue(waiting)
	b.Enqueue(delayed)
	tok := mustDequeue(t, b, held)

	// A worker blocked in Dequeue is released when leadership is lost.
	errc := make(chan error, 1)
	go func() {
		_, _, err := b.Dequeue(context.Background(), []string{"batch"})
		errc <- err
	}()
	b.SetEnabled(false)
	if err := <-errc; !errors.Is(err, ErrBrokerDisabled) {
		t.Fatalf("blocked dequeue returned %v", err)
	}
	if s := b.Stats(); s.TotalBlocked+s.TotalUnacked+len(s.DelayedEvals)+s.TotalReady != 0 {
		t.Fatalf("disabled broker not empty: %+v", s)
	}
	if err := b.Ack(held.ID, tok); !errors.Is(err, ErrNotOutstanding) {
		t.Fatalf("ack after disable: %v", err)
	}
	b.Enqueue(held) // ignored while disabled
	if _, _, err := b.Dequeue(context.Background(), []string{"service"}); !errors.Is(err, ErrBrokerDisabled) {
		t.Fatalf("dequeue while disabled: %v", err)
	}
	clock.Advance(time.Hour) // stale timers must not resurrect anything

	b.SetEnabled(true)
	mustEmpty(t, b)
	for _, e := range []*structs.Evaluation{held, waiting, delayed} {
		b.Enqueue(e) // the new leader restores pending evals from state
	}
	mustDequeue(t, b, held)
}

func TestBroker_EnqueueAllWithTokenWaitsForAck(t *testing.T) {
	b, _ := newTestBroker(t)
	e := testEval("web", 50, 1)
	b.Enqueue(e)
	tok := mustDequeue(t, b, e)
	// BlockedEvals unblocks the eval while its worker is still reblocking it.
	b.EnqueueAll(map[*structs.Evaluation]string{e: tok})
	mustEmpty(t, b)
	if err := b.Ack(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	tok2 := mustDequeue(t, b, e)
	// A nack drops the requeue: the nack itself redelivers.
	b.EnqueueAll(map[*structs.Evaluation]string{e: tok2})
	if err := b.Nack(e.ID, tok2); err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.TotalWaiting != 1 || s.TotalReady != 0 {
		t.Fatalf("stats after nack: %+v", s)
	}
}

func TestBroker_StatsCountEveryQueue(t *testing.T) {
	b, _ := newTestBroker(t)
	a1 := testEval("a", 50, 1)
	a2 := testEval("a", 50, 2)
	sys := testEval("s", 50, 3)
	sys.Type = "system"
	c := testEval("c", 50, 4)
	for _, e := range []*structs.Evaluation{a1, a2, sys, c} {
		b.Enqueue(e)
	}
	tok := mustDequeue(t, b, a1)
	if err := b.Nack(a1.ID, tok); err != nil {
		t.Fatal(err)
	}
	mustDequeue(t, b, c)
	s := b.Stats()
	want := structs.BrokerStats{TotalReady: 1, TotalUnacked: 1, TotalBlocked: 1, TotalWaiting: 1}
	if s.TotalReady != want.TotalReady || s.TotalUnacked != want.TotalUnacked ||
		s.TotalBlocked != want.TotalBlocked || s.TotalWaiting != want.TotalWaiting || s.TotalFailed != 0 {
		t.Fatalf("stats = %+v, want %+v", s, want)
	}
	if s.ByScheduler["system"].Ready != 1 || s.ByScheduler["service"].Unacked != 1 {
		t.Fatalf("by scheduler: system %+v service %+v", s.ByScheduler["system"], s.ByScheduler["service"])
	}
}

func TestBroker_ConcurrentWorkersEachEvalOnceAndJobsNeverOverlap(t *testing.T) {
	b, err := NewEvalBroker(EvalBrokerConfig{NackTimeout: time.Minute, DeliveryLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(true)
	const jobs, perJob, workers = 20, 5, 4
	var mu sync.Mutex
	running := map[string]bool{}
	processed := 0
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				e, tok, err := b.Dequeue(ctx, []string{"service"})
				if err != nil {
					return
				}
				mu.Lock()
				if running[e.JobID] {
					t.Errorf("job %s delivered to two workers at once", e.JobID)
				}
				running[e.JobID] = true
				mu.Unlock()
				mu.Lock()
				running[e.JobID] = false
				processed++
				mu.Unlock()
				if err := b.Ack(e.ID, tok); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	idx := uint64(0)
	for i := 0; i < perJob; i++ {
		for j := 0; j < jobs; j++ {
			idx++
			b.Enqueue(testEval(string(rune('a'+j)), 50, idx))
		}
	}
	// Every job runs at least once; superseded evals are cancelable.
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := b.Stats()
		mu.Lock()
		n := processed
		mu.Unlock()
		if s.TotalReady+s.TotalUnacked+s.TotalBlocked == 0 {
			canceled := len(b.Cancelable(jobs * perJob))
			if n+canceled != jobs*perJob || n < jobs {
				t.Errorf("processed %d + canceled %d, want %d with every job run", n, canceled, jobs*perJob)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker did not drain: %+v", s)
		}
		// The workers drain the broker on their own; look again shortly.
		<-time.After(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
}
