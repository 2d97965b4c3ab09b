package planner

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func TestPlanQueue_PriorityThenArrivalOrder(t *testing.T) {
	q := NewQueue()
	q.SetEnabled(true)
	plans := []*structs.Plan{
		{EvalID: "low", Priority: 10},
		{EvalID: "high-1", Priority: 80},
		{EvalID: "mid", Priority: 50},
		{EvalID: "high-2", Priority: 80},
	}
	for _, p := range plans {
		if _, err := q.Enqueue(p); err != nil {
			t.Fatal(err)
		}
	}
	if d := q.Stats().Depth; d != 4 {
		t.Fatalf("depth %d", d)
	}
	var got []string
	for range plans {
		p, err := q.dequeue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p.plan.EvalID)
	}
	want := []string{"high-1", "high-2", "mid", "low"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestPlanQueue_DequeueWaitsForAPlan(t *testing.T) {
	q := NewQueue()
	q.SetEnabled(true)
	got := make(chan *pendingPlan)
	go func() {
		p, err := q.dequeue(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()
	fut, err := q.Enqueue(&structs.Plan{EvalID: "e"})
	if err != nil {
		t.Fatal(err)
	}
	p := <-got
	p.respond(&structs.PlanResult{AllocIndex: 7}, nil)
	p.respond(nil, errors.New("ignored: only the first answer counts"))
	res, err := fut.Wait()
	if err != nil || res.AllocIndex != 7 {
		t.Fatalf("future = %+v, %v", res, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := q.dequeue(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("dequeue on empty queue: %v", err)
	}
}

func TestPlanQueue_DisableFailsWaitingPlansAndRefusesNewOnes(t *testing.T) {
	q := NewQueue()
	if _, err := q.Enqueue(&structs.Plan{}); !errors.Is(err, ErrQueueDisabled) {
		t.Fatalf("enqueue on disabled queue: %v", err)
	}
	q.SetEnabled(true)
	fut, err := q.Enqueue(&structs.Plan{EvalID: "waiting"})
	if err != nil {
		t.Fatal(err)
	}
	q.SetEnabled(false)
	if _, err := fut.Wait(); !errors.Is(err, ErrQueueDisabled) {
		t.Fatalf("waiting plan answered with %v", err)
	}
	if _, err := q.dequeue(context.Background()); !errors.Is(err, ErrQueueDisabled) {
		t.Fatalf("dequeue on disabled queue: %v", err)
	}
	if q.Enabled() || q.Stats().Depth != 0 {
		t.Fatal("queue not emptied")
	}
}
