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

func newTestBlocked(t *testing.T) (*BlockedEvals, *EvalBroker) {
	t.Helper()
	broker, _ := newTestBroker(t)
	blocked := NewBlockedEvals(broker, BlockedEvalsConfig{})
	blocked.SetEnabled(true)
	t.Cleanup(func() { blocked.SetEnabled(false) })
	return blocked, broker
}

func blockedEvalFor(jobID string, index, snapshot uint64, elig map[string]bool) *structs.Evaluation {
	e := testEval(jobID, 50, index)
	e.Status = structs.EvalStatusBlocked
	e.TriggeredBy = structs.EvalTriggerQueuedAllocs
	e.SnapshotIndex = snapshot
	e.ClassEligibility = elig
	return e
}

// waitDequeue waits up to a deadline for a woken eval.
func waitDequeue(t *testing.T, b *EvalBroker) (*structs.Evaluation, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e, tok, err := b.Dequeue(ctx, []string{"service", "system"})
	if err != nil {
		t.Fatalf("no eval was woken: %v", err)
	}
	return e, tok
}

func expectWoken(t *testing.T, b *EvalBroker, want ...*structs.Evaluation) {
	t.Helper()
	got := map[string]bool{}
	for range want {
		e, tok := waitDequeue(t, b)
		got[e.ID] = true
		if err := b.Ack(e.ID, tok); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range want {
		if !got[w.ID] {
			t.Fatalf("eval of job %s was not woken", w.JobID)
		}
	}
}

// sentinel proves the unblock loop processed every earlier unblock: its
// own unblock is coalesced with them or processed after them.
func expectNotWoken(t *testing.T, blocked *BlockedEvals, b *EvalBroker, index uint64) {
	t.Helper()
	s := blockedEvalFor("sentinel", index, index, nil)
	s.NodeID = "sentinel-node"
	blocked.Block(s)
	blocked.UnblockNode("sentinel-node", index+1)
	e, tok := waitDequeue(t, b)
	if e.ID != s.ID {
		t.Fatalf("eval of job %s was woken, want only the sentinel", e.JobID)
	}
	if err := b.Ack(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	mustEmpty(t, b, "service", "system")
}

func TestBlocked_NewNodeClassWakesEvalThatNeverSawIt(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	e := blockedEvalFor("web", 10, 10, map[string]bool{"small": false})
	blocked.Block(e)
	blocked.Unblock("big", 11) // a node of a class the scheduler never saw joined
	expectWoken(t, broker, e)
	if s := blocked.Stats(); s.TotalBlocked != 0 {
		t.Fatalf("still blocked: %+v", s)
	}
}

func TestBlocked_TerminalAllocFreesCapacityOnItsNodeClass(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	e := blockedEvalFor("web", 10, 10, map[string]bool{"small": true})
	blocked.Block(e)
	// An alloc on a node of class small reported complete at index 12.
	blocked.Unblock("small", 12)
	expectWoken(t, broker, e)
}

func TestBlocked_NodeBecomingEligibleWakesEligibleClassOnly(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	eligible := blockedEvalFor("web", 10, 10, map[string]bool{"gpu": true})
	ineligible := blockedEvalFor("db", 11, 11, map[string]bool{"gpu": false})
	escaped := blockedEvalFor("odd", 12, 12, map[string]bool{"gpu": false})
	escaped.EscapedComputedClass = true
	for _, e := range []*structs.Evaluation{eligible, ineligible, escaped} {
		blocked.Block(e)
	}
	blocked.Unblock("gpu", 20)
	expectWoken(t, broker, eligible, escaped)
	expectNotWoken(t, blocked, broker, 30)
	if s := blocked.Stats(); s.TotalBlocked != 1 {
		t.Fatalf("blocked = %+v, want the class-ineligible eval still parked", s)
	}
}

func TestBlocked_UnblockOlderThanSnapshotDoesNotWake(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	e := blockedEvalFor("web", 20, 20, map[string]bool{"small": true})
	blocked.Block(e)
	blocked.Unblock("small", 15) // its scheduler already saw this change
	expectNotWoken(t, blocked, broker, 30)
}

func TestBlocked_NewerEvalReplacesOlderForSameJob(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	older := blockedEvalFor("web", 10, 10, nil)
	newer := blockedEvalFor("web", 20, 20, nil)
	stale := blockedEvalFor("web", 5, 5, nil)
	blocked.Block(older)
	blocked.Block(newer)
	blocked.Block(stale) // arrives late, older than the parked one
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var dups []*structs.Evaluation
	for len(dups) < 2 {
		got := blocked.GetDuplicates(ctx)
		if got == nil {
			t.Fatalf("duplicates = %v, want the two older evals", dups)
		}
		dups = append(dups, got...)
	}
	if dups[0].ID != older.ID || dups[1].ID != stale.ID {
		t.Fatalf("duplicates = %d, %d; want older then stale", dups[0].CreateIndex, dups[1].CreateIndex)
	}
	if s := blocked.Stats(); s.TotalBlocked != 1 {
		t.Fatalf("blocked = %d, want one per job", s.TotalBlocked)
	}
	blocked.Unblock("any", 30)
	expectWoken(t, broker, newer)
}

func TestBlocked_EvalThatMissedAnUnblockIsEnqueuedAtOnce(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	// Capacity appeared at index 10 while the scheduler worked on a
	// snapshot at index 5; it blocks afterwards.
	blocked.Unblock("small", 10)
	missed := blockedEvalFor("web", 11, 5, map[string]bool{"small": true})
	blocked.Block(missed)
	if s := blocked.Stats(); s.TotalBlocked != 0 {
		t.Fatal("eval that missed an unblock was parked")
	}
	expectWoken(t, broker, missed)

	// One whose snapshot includes the change, or which cannot use the
	// class, is parked.
	saw := blockedEvalFor("db", 12, 10, map[string]bool{"small": true})
	cannot := blockedEvalFor("cache", 13, 5, map[string]bool{"small": false})
	blocked.Block(saw)
	blocked.Block(cannot)
	if s := blocked.Stats(); s.TotalBlocked != 2 {
		t.Fatalf("blocked = %d, want 2", s.TotalBlocked)
	}
}

func TestBlocked_UnblockNodeWakesSystemEvalForThatNode(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	e := blockedEvalFor("sys", 10, 10, map[string]bool{"c": false})
	e.Type = "system"
	e.NodeID = "node-1"
	other := blockedEvalFor("sys2", 11, 11, map[string]bool{"c": false})
	other.Type = "system"
	other.NodeID = "node-2"
	blocked.Block(e)
	blocked.Block(other)
	if s := blocked.Stats(); s.TotalNode != 2 {
		t.Fatalf("stats %+v", s)
	}
	blocked.UnblockNode("node-1", 12)
	expectWoken(t, broker, e)
	expectNotWoken(t, blocked, broker, 20)
}

func TestBlocked_UnblockFailedRetriesMaxPlanEvals(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	e := blockedEvalFor("web", 10, 10, map[string]bool{"c": false})
	e.TriggeredBy = structs.EvalTriggerMaxPlans
	capacity := blockedEvalFor("db", 11, 11, map[string]bool{"c": false})
	blocked.Block(e)
	blocked.Block(capacity)
	if s := blocked.Stats(); s.TotalMaxPlans != 1 {
		t.Fatalf("stats %+v", s)
	}
	blocked.UnblockFailed()
	mustDequeue(t, broker, e)
	mustEmpty(t, broker)
}

func TestBlocked_ReblockedEvalWokenBeforeAckIsDeliveredAfterAck(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	e := blockedEvalFor("web", 10, 10, map[string]bool{"c": true})
	broker.Enqueue(e)
	tok := mustDequeue(t, broker, e)
	blocked.Reblock(e, tok) // worker still holds it
	blocked.Unblock("c", 11)
	expectNotWoken(t, blocked, broker, 20)
	if err := broker.Ack(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	mustDequeue(t, broker, e)
}

func TestBlocked_ReblockAfterBlockOfTheSameEvalKeepsTheToken(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	e := blockedEvalFor("web", 10, 10, map[string]bool{"c": true})
	broker.Enqueue(e)
	tok := mustDequeue(t, broker, e)
	blocked.Block(e) // the FSM hook, on the raft write of the reblocked eval
	blocked.Reblock(e, tok)
	blocked.Unblock("c", 11)
	expectNotWoken(t, blocked, broker, 20)
	if err := broker.Ack(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	mustDequeue(t, broker, e)
}

func TestBlocked_WakeOfAnEvalAWorkerHoldsWaitsForItsAck(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	e := blockedEvalFor("web", 10, 10, map[string]bool{"c": true})
	broker.Enqueue(e)
	tok := mustDequeue(t, broker, e)
	blocked.Block(e) // parked without the token
	blocked.Unblock("c", 11)
	expectNotWoken(t, blocked, broker, 20)
	if err := broker.Ack(e.ID, tok); err != nil {
		t.Fatal(err)
	}
	mustDequeue(t, broker, e) // not dropped as already tracked
}

func TestBlocked_UntrackMakesParkedEvalADuplicate(t *testing.T) {
	blocked, _ := newTestBlocked(t)
	e := blockedEvalFor("web", 10, 10, nil)
	blocked.Block(e)
	blocked.Untrack("default", "web")
	dups, _ := blocked.takeDuplicates()
	if len(dups) != 1 || dups[0].ID != e.ID || blocked.Stats().TotalBlocked != 0 {
		t.Fatalf("duplicates %v, stats %+v", dups, blocked.Stats())
	}
}

func TestBlocked_DisableForgetsEverythingAndStopsLoop(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	blocked.Unblock("c", 10)
	blocked.Block(blockedEvalFor("web", 11, 11, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan []*structs.Evaluation, 1)
	go func() { got <- blocked.GetDuplicates(ctx) }()
	blocked.SetEnabled(false)
	if s := blocked.Stats(); s.TotalBlocked != 0 || blocked.Enabled() {
		t.Fatalf("stats after disable: %+v", s)
	}
	blocked.Block(blockedEvalFor("db", 12, 12, nil))
	blocked.Unblock("c", 13)
	if s := blocked.Stats(); s.TotalBlocked != 0 {
		t.Fatal("disabled tracker parked an eval")
	}
	cancel()
	if d := <-got; d != nil {
		t.Fatalf("duplicates %v", d)
	}
	// Re-enabled, the unblock index of the previous term is forgotten:
	// an eval with an old snapshot is parked.
	blocked.SetEnabled(true)
	old := blockedEvalFor("web", 14, 1, nil)
	blocked.Block(old)
	if blocked.Stats().TotalBlocked != 1 {
		t.Fatal("eval not parked after re-enable")
	}
	mustEmpty(t, broker)
}

func TestBlocked_UnblockStormWakesEveryEvalOnce(t *testing.T) {
	blocked, broker := newTestBlocked(t)
	const evals = 50
	for i := 0; i < evals; i++ {
		blocked.Block(blockedEvalFor(string(rune('A'+i)), uint64(i+1), 1, map[string]bool{"c": true}))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				blocked.Unblock("c", uint64(100+g*100+i))
			}
		}(g)
	}
	wg.Wait()
	seen := map[string]bool{}
	for i := 0; i < evals; i++ {
		e, tok := waitDequeue(t, broker)
		if seen[e.ID] {
			t.Fatalf("eval %s woken twice", e.ID)
		}
		seen[e.ID] = true
		if err := broker.Ack(e.ID, tok); err != nil {
			t.Fatal(err)
		}
	}
	mustEmpty(t, broker)
}

type recordingWriter struct {
	mu    sync.Mutex
	evals []*structs.Evaluation
	fail  int
	wrote chan struct{}
}

func (w *recordingWriter) UpsertEvals(evals []*structs.Evaluation) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() {
		select {
		case w.wrote <- struct{}{}:
		default:
		}
	}()
	if w.fail > 0 {
		w.fail--
		return errors.New("no leader")
	}
	w.evals = append(w.evals, evals...)
	return nil
}

func TestBlocked_ReaperCancelsDuplicatesAndSupersededEvals(t *testing.T) {
	clock := clock.NewFake(testEpoch)
	broker, err := NewEvalBroker(testBrokerConfig(clock))
	if err != nil {
		t.Fatal(err)
	}
	broker.SetEnabled(true)
	blocked := NewBlockedEvals(broker, BlockedEvalsConfig{Clock: clock})
	blocked.SetEnabled(true)
	defer blocked.SetEnabled(false)

	w := &recordingWriter{fail: 1, wrote: make(chan struct{}, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ReapCancelableEvals(ctx, broker, blocked, w)
	}()
	defer func() { cancel(); <-done }()

	blocked.Block(blockedEvalFor("web", 10, 10, nil))
	blocked.Block(blockedEvalFor("web", 20, 20, nil)) // duplicate of the first
	<-w.wrote                                         // first write fails
	clock.WaitForTimers(1, 5*time.Second)
	clock.Advance(reaperMinBackoff)
	<-w.wrote
	if !clock.WaitForTimers(1, 5*time.Second) {
		t.Fatal("reaper is not polling")
	}

	first, second := testEval("db", 50, 1), testEval("db", 50, 2)
	third := testEval("db", 50, 3)
	for _, e := range []*structs.Evaluation{first, second, third} {
		broker.Enqueue(e)
	}
	tok := mustDequeue(t, broker, first)
	if err := broker.Ack(first.ID, tok); err != nil {
		t.Fatal(err)
	}
	clock.Advance(cancelPollInterval)
	<-w.wrote
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.evals) != 2 || w.evals[0].CreateIndex != 10 || w.evals[1].ID != second.ID {
		t.Fatalf("canceled %v", w.evals)
	}
	for _, e := range w.evals {
		if e.Status != structs.EvalStatusCancelled {
			t.Fatalf("eval %s written with status %s", e.ID, e.Status)
		}
	}
}

func TestBlocked_PeriodicUnblockFailedRunsOnTheClock(t *testing.T) {
	clock := clock.NewFake(testEpoch)
	broker, err := NewEvalBroker(testBrokerConfig(clock))
	if err != nil {
		t.Fatal(err)
	}
	broker.SetEnabled(true)
	blocked := NewBlockedEvals(broker, BlockedEvalsConfig{Clock: clock})
	blocked.SetEnabled(true)
	defer blocked.SetEnabled(false)
	e := blockedEvalFor("web", 10, 10, nil)
	e.TriggeredBy = structs.EvalTriggerMaxPlans
	blocked.Block(e)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		PeriodicUnblockFailed(ctx, blocked, clock, time.Minute)
	}()
	defer func() { cancel(); <-done }()
	if !clock.WaitForTimers(1, 5*time.Second) {
		t.Fatal("loop did not start its timer")
	}
	clock.Advance(59 * time.Second)
	mustEmpty(t, broker)
	clock.Advance(time.Second)
	waitDequeue(t, broker)
}
