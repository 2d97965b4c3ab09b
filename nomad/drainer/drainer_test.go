package drainer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
	"github.com/hashicorp/go-hclog"
)

// testClock is the shared fake clock that also says, on armed, how far
// ahead each AfterFuncAt is, so a test knows the loop has gone to sleep
// and when it wants to wake.
type testClock struct {
	*clock.Fake
	armed chan time.Duration
}

func (c *testClock) AfterFuncAt(when time.Time, f func()) clock.Timer {
	d := when.Sub(c.Now())
	t := c.Fake.AfterFuncAt(when, f)
	c.armed <- d
	return t
}

func (c *testClock) advance(d time.Duration) { c.Advance(d) }

// storeRaft applies the drainer's entries to a real state store, as the
// FSM would, and can be told to refuse them.
type storeRaft struct {
	st     *state.StateStore
	mu     sync.Mutex
	index  uint64
	refuse error
	writes int
}

func (r *storeRaft) next() (uint64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes++
	if r.refuse != nil {
		return 0, r.refuse
	}
	r.index++
	return 1000 + r.index, nil
}

func (r *storeRaft) MarkMigrations(req *structs.AllocUpdateDesiredTransitionRequest) (uint64, error) {
	idx, err := r.next()
	if err != nil {
		return 0, err
	}
	return idx, r.st.Write(idx, func(tx *state.Txn) error {
		return tx.UpdateAllocsDesiredTransitions(req.Allocs, req.Evals, req.NodeEvents)
	})
}

func (r *storeRaft) EndDrain(req *structs.NodeUpdateDrainRequest) (uint64, error) {
	idx, err := r.next()
	if err != nil {
		return 0, err
	}
	return idx, r.st.Write(idx, func(tx *state.Txn) error {
		return tx.EndNodeDrain(req.NodeID, req.MarkEligible, state.DrainStatusComplete, req.UpdatedAt, req.NodeEvent, state.DrainOperator{})
	})
}

func (r *storeRaft) setRefuse(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refuse = err
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.Until(t, 10*time.Second, what, cond)
}

func startLoop(t *testing.T, w *world, raft *storeRaft) (*testClock, func()) {
	return startLoopEvery(t, w, raft, 0)
}

func startLoopEvery(t *testing.T, w *world, raft *storeRaft, minPass time.Duration) (*testClock, func()) {
	t.Helper()
	clock := &testClock{Fake: clock.NewFake(t0), armed: make(chan time.Duration, 16)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(ctx, Config{Clock: clock, Logger: hclog.NewNullLogger(), State: func() (State, <-chan struct{}) { return w.st.View(), w.st.AbandonCh() },
			Raft: raft, NewID: structs.GenerateUUID, RetryDelay: time.Second, MinPassInterval: minPass})
	}()
	stop := func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the drainer loop did not return when its context ended")
		}
	}
	t.Cleanup(stop)
	return clock, stop
}

func allocMarked(w *world, id string) bool {
	a, _ := w.st.AllocByID(nil, id)
	return a != nil && a.DesiredTransition.ShouldMigrate()
}

// The loop sleeps until the deadline on its clock, marks what is left
// then, wakes again when a client reports the alloc stopped, and
// completes the drain.
func TestRunWakesAtTheDeadlineAndWhenStateChanges(t *testing.T) {
	w := newWorld(t)
	w.node("n1", hour())
	w.alloc(w.job("etl", structs.JobTypeBatch, 1, 1), "n1", nil)
	w.plan(t0) // writes the world to the store
	raft := &storeRaft{st: w.st}
	clock, _ := startLoop(t, w, raft)

	if d := <-clock.armed; d != time.Hour {
		t.Fatalf("the loop must sleep until the deadline, armed %s", d)
	}
	if allocMarked(w, "a00") {
		t.Fatal("batch work marked before the deadline")
	}
	clock.advance(time.Hour)
	waitUntil(t, "the batch alloc marked at the deadline", func() bool { return allocMarked(w, "a00") })

	a, _ := w.st.AllocByID(nil, "a00")
	stopped := a.Copy()
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	if err := w.st.Write(500, func(tx *state.Txn) error { return tx.UpsertAllocs([]*structs.Allocation{stopped}) }); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the drain completed", func() bool {
		n, _ := w.st.NodeByID(nil, "n1")
		return n.DrainStrategy == nil && len(n.Events) > 0 && n.Events[len(n.Events)-1].Message == EventComplete
	})
}

// A refused write is retried after RetryDelay on the clock, not in a
// tight loop.
func TestRunRetriesARefusedWriteAfterItsDelay(t *testing.T) {
	w := newWorld(t)
	w.node("n1", hour())
	w.alloc(w.job("web", structs.JobTypeService, 2, 1), "n1", yes)
	w.alloc(w.jobs["web"], "n1", yes)
	w.plan(t0)
	raft := &storeRaft{st: w.st}
	raft.setRefuse(errors.New("not the leader"))
	clock, _ := startLoop(t, w, raft)

	if d := <-clock.armed; d != time.Second {
		t.Fatalf("after a refusal the loop must wait RetryDelay, armed %s", d)
	}
	raft.mu.Lock()
	writes := raft.writes
	raft.mu.Unlock()
	if writes != 1 {
		t.Fatalf("%d writes before the retry delay passed", writes)
	}
	raft.setRefuse(nil)
	clock.advance(time.Second)
	waitUntil(t, "the batch written on retry", func() bool { return allocMarked(w, "a00") })
}

// State changes that come faster than MinPassInterval wait for it on the
// clock: the next batch is planned only once the interval has passed.
func TestRunBoundsHowOftenChangesStartAPass(t *testing.T) {
	w := newWorld(t)
	w.node("n1", hour())
	w.node("n2", nil)
	j := w.job("web", structs.JobTypeService, 3, 1)
	for i := 0; i < 3; i++ {
		w.alloc(j, "n1", yes)
	}
	w.plan(t0)
	raft := &storeRaft{st: w.st}
	clock, _ := startLoopEvery(t, w, raft, time.Second)

	if d := <-clock.armed; d != time.Hour {
		t.Fatalf("want the loop asleep until the deadline, armed %s", d)
	}
	if !allocMarked(w, "a00") || allocMarked(w, "a01") {
		t.Fatal("want exactly the first alloc marked")
	}
	// The first moved: stopped, and its replacement settled on n2.
	a, _ := w.st.AllocByID(nil, "a00")
	stopped := a.Copy()
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	repl := w.alloc(j, "n2", yes)
	if err := w.st.Write(900, func(tx *state.Txn) error { return tx.UpsertAllocs([]*structs.Allocation{stopped, repl}) }); err != nil {
		t.Fatal(err)
	}
	if d := <-clock.armed; d != time.Second {
		t.Fatalf("want the change held for the interval, armed %s", d)
	}
	if allocMarked(w, "a01") {
		t.Fatal("a pass ran before the interval passed")
	}
	clock.advance(time.Second)
	waitUntil(t, "the next batch after the interval", func() bool { return allocMarked(w, "a01") })
}
