package planner

import (
	"container/heap"
	"context"
	"sync"

	"github.com/drover-sched/drover/structs"
)

// ErrQueueDisabled is returned for plans submitted to, or waiting in, the
// queue of a server that is not (or no longer) the leader. The worker nacks
// its eval; the eval is retried under the new leader.
var ErrQueueDisabled = structs.NewCodedError("PlanQueueDisabled", "plan queue disabled")

// Future is the answer to a submitted plan.
type Future interface {
	// Wait blocks until the plan applier answers: with the part of the plan
	// that was committed, or with an error.
	Wait() (*structs.PlanResult, error)
}

// QueueStats describes the queue.
type QueueStats struct {
	Depth int
}

// Queue holds plans submitted by workers (the server's Plan.Submit) until
// the single Applier takes them: highest priority first, then in arrival
// order. Only the leader's queue is enabled; disabling it answers every
// waiting plan with ErrQueueDisabled so no worker waits forever. It is safe
// for concurrent use.
type Queue struct {
	mu      sync.Mutex
	enabled bool
	seq     uint64
	ready   pendingPlanHeap
	notify  chan struct{} // closed and replaced on enqueue and on disable
}

// pendingPlan is a plan in the queue and the future its submitter waits on.
type pendingPlan struct {
	plan   *structs.Plan
	seq    uint64
	result *structs.PlanResult
	err    error
	done   chan struct{}
	once   sync.Once
}

// Wait implements Future.
func (p *pendingPlan) Wait() (*structs.PlanResult, error) {
	<-p.done
	return p.result, p.err
}

// respond answers the submitter; only the first answer counts.
func (p *pendingPlan) respond(result *structs.PlanResult, err error) {
	p.once.Do(func() {
		p.result, p.err = result, err
		close(p.done)
	})
}

// NewQueue returns a disabled queue.
func NewQueue() *Queue {
	return &Queue{notify: make(chan struct{})}
}

// SetEnabled turns the queue on when this server becomes leader, and off
// (failing every waiting plan) when it stops being leader.
func (q *Queue) SetEnabled(enabled bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.enabled = enabled
	if !enabled {
		for _, p := range q.ready {
			p.respond(nil, ErrQueueDisabled)
		}
		q.ready = nil
		q.wakeLocked()
	}
}

// Enabled reports whether the queue accepts plans.
func (q *Queue) Enabled() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.enabled
}

// Enqueue adds a plan and returns the future its answer arrives on.
func (q *Queue) Enqueue(plan *structs.Plan) (Future, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.enabled {
		return nil, ErrQueueDisabled
	}
	q.seq++
	p := &pendingPlan{plan: plan, seq: q.seq, done: make(chan struct{})}
	heap.Push(&q.ready, p)
	q.wakeLocked()
	return p, nil
}

func (q *Queue) wakeLocked() {
	close(q.notify)
	q.notify = make(chan struct{})
}

// dequeue blocks until a plan is queued, ctx is done, or the queue is
// disabled.
func (q *Queue) dequeue(ctx context.Context) (*pendingPlan, error) {
	for {
		q.mu.Lock()
		if !q.enabled {
			q.mu.Unlock()
			return nil, ErrQueueDisabled
		}
		if len(q.ready) > 0 {
			p := heap.Pop(&q.ready).(*pendingPlan)
			q.mu.Unlock()
			return p, nil
		}
		wake := q.notify
		q.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// tryDequeue takes up to max queued plans without waiting.
func (q *Queue) tryDequeue(max int) []*pendingPlan {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*pendingPlan
	for len(out) < max && len(q.ready) > 0 {
		out = append(out, heap.Pop(&q.ready).(*pendingPlan))
	}
	return out
}

// Stats describes the queue.
func (q *Queue) Stats() *QueueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return &QueueStats{Depth: len(q.ready)}
}

// pendingPlanHeap orders plans by priority, then arrival.
type pendingPlanHeap []*pendingPlan

func (h pendingPlanHeap) Len() int { return len(h) }
func (h pendingPlanHeap) Less(i, j int) bool {
	if h[i].plan.Priority != h[j].plan.Priority {
		return h[i].plan.Priority > h[j].plan.Priority
	}
	return h[i].seq < h[j].seq
}
func (h pendingPlanHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingPlanHeap) Push(x any)   { *h = append(*h, x.(*pendingPlan)) }
func (h *pendingPlanHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return p
}
