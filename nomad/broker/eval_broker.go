package broker

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/structs"
)

// failedQueue is the pseudo scheduler type of evals that reached the
// delivery limit. Only ReapFailedEvals dequeues from it.
const failedQueue = "_failed"

// Errors returned by the broker. They are coded, so callers on the far side
// of an RPC still tell them apart with errors.Is.
var (
	// ErrBrokerDisabled is returned while this server is not the leader.
	ErrBrokerDisabled = structs.NewCodedError("BrokerDisabled", "eval broker disabled")
	// ErrNotOutstanding is returned for an eval that no worker holds (it
	// was acked, nacked, timed out, or never delivered).
	ErrNotOutstanding = structs.NewCodedError("NotOutstanding", "evaluation is not outstanding")
)

// EvalBrokerConfig configures an EvalBroker.
type EvalBrokerConfig struct {
	// Clock drives nack timers and delayed evals; clock.Real if nil.
	Clock clock.Clock
	// NackTimeout is how long a worker may hold an eval without acking,
	// nacking or heartbeating (OutstandingReset) before it is nacked for it.
	NackTimeout time.Duration
	// InitialNackDelay delays the redelivery after the first nack, and
	// SubsequentNackDelay after later ones, so a failing eval does not spin.
	InitialNackDelay    time.Duration
	SubsequentNackDelay time.Duration
	// DeliveryLimit is how many times an eval is delivered before it goes
	// to the failed queue.
	DeliveryLimit int
	// FailedFollowUpDelay is the least time ReapFailedEvals waits before
	// the follow-up of a failed eval runs (1 minute if zero); each
	// follow-up waits up to five times that, spread per eval.
	FailedFollowUpDelay time.Duration
	Logger              hclog.Logger
	// Metrics receives each eval's time from dequeue to ack
	// (nomad.nomad.broker.process_time); nil drops it.
	Metrics *metrics.Metrics
}

// EvalBroker is the leader's queue of evaluations waiting for a worker. It
// gives each eval to one worker at a time (with a token the worker must
// show to ack, nack or submit plans) and keeps at most one eval per job
// outstanding, so two workers never schedule the same job against each
// other. Evals that arrive for a busy job wait per job; when the busy one is
// acked only the newest waiting one runs and the older ones are handed to
// the leader to cancel (Cancelable): the newest eval reconciles the whole
// job anyway, and running the stale ones after it would only churn.
//
// All state is guarded by mu. Timer callbacks take mu themselves and check
// that the state they were armed for is still current, because a callback
// may run after the timer was stopped (real clock) or after a flush.
type EvalBroker struct {
	cfg EvalBrokerConfig

	mu      sync.Mutex
	enabled bool
	// paused keeps Dequeue from handing out evals while evals still
	// arrive, wait and time out as usual (see SetPaused). Unlike enabled
	// it survives SetEnabled: it follows the scheduler configuration, not
	// leadership.
	paused bool
	seq    uint64 // enqueue order, the last tie-breaker of every queue

	// syncMu serialises SyncPaused calls (see there).
	syncMu sync.Mutex

	// evals counts deliveries of every eval the broker holds, in any state;
	// Enqueue ignores an eval already here.
	evals map[string]int
	// jobs maps a job to the one eval it has outstanding: ready, unacked,
	// waiting out a nack delay, or in the failed queue.
	jobs map[structs.NamespacedID]string
	// pending holds evals whose job is busy, newest first.
	pending      map[structs.NamespacedID]*evalHeap
	pendingCount int
	// ready holds evals a worker may take, per scheduler type.
	ready map[string]*evalHeap
	// unack holds delivered evals by ID.
	unack map[string]*unackedEval
	// nackWait holds nacked evals waiting out their redelivery delay.
	nackWait map[string]*nackWaitingEval
	// requeue holds evals re-enqueued (EnqueueAll with a token) while the
	// worker that holds them has not acked yet; they go back in on Ack.
	requeue map[string]*structs.Evaluation
	// delayed holds evals whose WaitUntil is in the future.
	delayed    *evalHeap
	delayTimer clock.Timer
	// cancelable holds superseded evals for the leader to mark canceled.
	cancelable []*structs.Evaluation
	// notify is closed and replaced when an eval becomes ready or the
	// broker is disabled, waking blocked Dequeue calls.
	notify chan struct{}
}

type unackedEval struct {
	eval   *structs.Evaluation
	token  string
	timer  clock.Timer
	gen    uint64 // bumped on every re-arm, so a stale timer firing is ignored
	paused bool

	// dequeued is when a worker took it, on the broker's clock.
	dequeued time.Time
}

type nackWaitingEval struct {
	eval  *structs.Evaluation
	timer clock.Timer
}

// NewEvalBroker returns a disabled broker.
func NewEvalBroker(cfg EvalBrokerConfig) (*EvalBroker, error) {
	if cfg.NackTimeout <= 0 {
		return nil, fmt.Errorf("eval broker: nack timeout must be positive, got %v", cfg.NackTimeout)
	}
	if cfg.DeliveryLimit < 1 {
		return nil, fmt.Errorf("eval broker: delivery limit must be at least 1, got %d", cfg.DeliveryLimit)
	}
	if cfg.InitialNackDelay < 0 || cfg.SubsequentNackDelay < 0 {
		return nil, fmt.Errorf("eval broker: nack delays must not be negative")
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.FailedFollowUpDelay <= 0 {
		cfg.FailedFollowUpDelay = failedFollowUpBaseWait
	}
	cfg.Metrics = telemetry.OrDiscard(cfg.Metrics)
	b := &EvalBroker{cfg: cfg, notify: make(chan struct{})}
	b.resetLocked()
	return b, nil
}

func (b *EvalBroker) resetLocked() {
	b.evals = map[string]int{}
	b.jobs = map[structs.NamespacedID]string{}
	b.pending = map[structs.NamespacedID]*evalHeap{}
	b.pendingCount = 0
	b.ready = map[string]*evalHeap{}
	b.unack = map[string]*unackedEval{}
	b.nackWait = map[string]*nackWaitingEval{}
	b.requeue = map[string]*structs.Evaluation{}
	b.delayed = newEvalHeap(delayOrder)
	b.cancelable = nil
}

// SetEnabled turns the broker on when this server becomes leader and off
// when it stops being leader. Disabling drops every eval and stops every
// timer: the evals are safe in the state store, and the next leader
// enqueues them again. Blocked Dequeue calls return ErrBrokerDisabled.
func (b *EvalBroker) SetEnabled(enabled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	was := b.enabled
	b.enabled = enabled
	if was && !enabled {
		for _, u := range b.unack {
			u.timer.Stop()
		}
		for _, w := range b.nackWait {
			w.timer.Stop()
		}
		if b.delayTimer != nil {
			b.delayTimer.Stop()
			b.delayTimer = nil
		}
		b.resetLocked()
		b.wakeLocked()
	}
}

// Enabled reports whether the broker accepts evals.
func (b *EvalBroker) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

// SetPaused stops (true) or resumes (false) handing out evals, for the
// scheduler configuration's PauseEvalBroker: an operator stops all
// scheduling without losing work. While paused, evals are still enqueued,
// delayed evals still come due and blocked evals are still woken into the
// ready queues; Dequeue just waits. Evals already handed out are
// unaffected: their workers ack, nack or time out as usual. Resuming wakes
// waiting Dequeue calls.
func (b *EvalBroker) SetPaused(paused bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.paused == paused {
		return
	}
	b.paused = paused
	if !paused {
		b.wakeLocked()
	}
	b.cfg.Logger.Info("eval broker pause changed", "paused", paused)
}

// Paused reports whether the broker is holding evals back.
func (b *EvalBroker) Paused() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.paused
}

// SyncPaused sets the pause to what read reports, holding a lock across
// the read and the set so that, of two concurrent callers reading the
// stored configuration, the later read is the one applied: a caller that
// read an older value cannot overwrite a newer one after it.
func (b *EvalBroker) SyncPaused(read func() (bool, error)) error {
	b.syncMu.Lock()
	defer b.syncMu.Unlock()
	paused, err := read()
	if err != nil {
		return err
	}
	b.SetPaused(paused)
	return nil
}

// Enqueue adds an eval. An eval the broker already holds is ignored (the
// FSM and the leader's restore may both enqueue it); an eval whose
// WaitUntil is in the future waits until the clock reaches it.
func (b *EvalBroker) Enqueue(eval *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enqueueLocked(eval)
}

// EnqueueAll adds evals woken by BlockedEvals, each with the token of the
// worker that reblocked it, or "". An eval a worker still holds (it was
// woken while that worker was reblocking it) is enqueued only once the
// worker acks, so it is never delivered twice at the same time, and never
// dropped as a duplicate either; a nack drops it, since the nack redelivers
// the eval anyway. The token only documents who held it: the current
// holder's ack releases it.
func (b *EvalBroker) EnqueueAll(evals map[*structs.Evaluation]string) {
	ordered := make([]*structs.Evaluation, 0, len(evals))
	for e := range evals {
		ordered = append(ordered, e)
	}
	sort.Slice(ordered, func(i, j int) bool {
		if ordered[i].CreateIndex != ordered[j].CreateIndex {
			return ordered[i].CreateIndex < ordered[j].CreateIndex
		}
		return ordered[i].ID < ordered[j].ID
	})
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range ordered {
		if u, ok := b.unack[e.ID]; ok {
			b.requeue[u.token] = e
			continue
		}
		b.enqueueLocked(e)
	}
}

func (b *EvalBroker) enqueueLocked(eval *structs.Evaluation) {
	if !b.enabled {
		return
	}
	if _, ok := b.evals[eval.ID]; ok {
		return
	}
	b.evals[eval.ID] = 0
	if eval.WaitUntil.After(b.cfg.Clock.Now()) {
		b.pushLocked(b.delayed, eval)
		b.armDelayTimerLocked()
		return
	}
	b.admitLocked(eval)
}

// admitLocked makes a tracked eval ready, or pending if its job is busy.
func (b *EvalBroker) admitLocked(eval *structs.Evaluation) {
	job := eval.NamespacedJobID()
	if cur, busy := b.jobs[job]; busy && cur != eval.ID {
		h := b.pending[job]
		if h == nil {
			h = newEvalHeap(newestFirst)
			b.pending[job] = h
		}
		b.pushLocked(h, eval)
		b.pendingCount++
		return
	}
	b.jobs[job] = eval.ID
	b.readyLocked(eval.Type, eval)
}

func (b *EvalBroker) readyLocked(queue string, eval *structs.Evaluation) {
	h := b.ready[queue]
	if h == nil {
		h = newEvalHeap(readyOrder)
		b.ready[queue] = h
	}
	b.pushLocked(h, eval)
	b.wakeLocked()
}

func (b *EvalBroker) pushLocked(h *evalHeap, eval *structs.Evaluation) {
	b.seq++
	h.push(eval, b.seq)
}

func (b *EvalBroker) wakeLocked() {
	close(b.notify)
	b.notify = make(chan struct{})
}

// Dequeue blocks until an eval of one of the scheduler types is ready and
// returns it with a fresh token, or returns ctx's error (a long-poll that
// timed out) or ErrBrokerDisabled. Among the types it takes the highest
// priority, then the oldest (lowest CreateIndex). While the broker is
// paused it waits as if nothing were ready.
func (b *EvalBroker) Dequeue(ctx context.Context, schedulers []string) (*structs.Evaluation, string, error) {
	for {
		b.mu.Lock()
		if !b.enabled {
			b.mu.Unlock()
			return nil, "", ErrBrokerDisabled
		}
		if !b.paused {
			if eval, token, ok := b.dequeueLocked(schedulers); ok {
				b.mu.Unlock()
				return eval, token, nil
			}
		}
		wake := b.notify
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, "", ctx.Err()
		}
	}
}

func (b *EvalBroker) dequeueLocked(schedulers []string) (*structs.Evaluation, string, bool) {
	var best *evalHeap
	for _, s := range schedulers {
		h := b.ready[s]
		if h == nil || h.Len() == 0 {
			continue
		}
		if best == nil || readyOrder(h.peek(), best.peek()) {
			best = h
		}
	}
	if best == nil {
		return nil, "", false
	}
	eval := best.pop()
	b.evals[eval.ID]++
	token := structs.GenerateUUID()
	u := &unackedEval{eval: eval, token: token, dequeued: b.cfg.Clock.Now()}
	b.unack[eval.ID] = u
	b.armNackTimerLocked(u)
	return eval, token, true
}

// armNackTimerLocked (re)starts the nack timeout of an unacked eval.
func (b *EvalBroker) armNackTimerLocked(u *unackedEval) {
	if u.timer != nil {
		u.timer.Stop()
	}
	u.gen++
	id, token, gen := u.eval.ID, u.token, u.gen
	u.timer = b.cfg.Clock.AfterFunc(b.cfg.NackTimeout, func() { b.nackTimedOut(id, token, gen) })
}

func (b *EvalBroker) nackTimedOut(id, token string, gen uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.unack[id]
	if !ok || u.token != token || u.gen != gen || u.paused {
		return // acked, nacked, re-armed or paused since the timer was set
	}
	b.cfg.Logger.Warn("eval not acked within nack timeout, nacking", "eval_id", id, "timeout", b.cfg.NackTimeout)
	b.nackLocked(u)
}

// withOutstanding runs fn, under the lock, on the unacked eval id if
// token owns it, and otherwise answers why not: the worker calls that
// change an outstanding eval (Ack, Nack, the nack timeout's reset, pause
// and resume) all check ownership this way first.
func (b *EvalBroker) withOutstanding(id, token string, fn func(u *unackedEval)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, err := b.outstandingLocked(id, token)
	if err != nil {
		return err
	}
	fn(u)
	return nil
}

// outstandingLocked returns the unacked eval id if token owns it.
func (b *EvalBroker) outstandingLocked(id, token string) (*unackedEval, error) {
	u, ok := b.unack[id]
	if !ok {
		return nil, fmt.Errorf("eval %s: %w", id, ErrNotOutstanding)
	}
	if u.token != token {
		return nil, fmt.Errorf("eval %s: %w", id, structs.ErrTokenMismatch)
	}
	return u, nil
}

// Ack records that the worker finished the eval. The job's slot goes to
// the newest eval waiting for it, and older waiting evals become
// Cancelable.
func (b *EvalBroker) Ack(evalID, token string) error {
	return b.withOutstanding(evalID, token, func(u *unackedEval) {
		u.timer.Stop()
		b.cfg.Metrics.AddSampleWithLabels(KeyProcessTime, ms(b.cfg.Clock.Now().Sub(u.dequeued)), EvalLabels(u.eval))
		delete(b.unack, evalID)
		delete(b.evals, evalID)
		job := u.eval.NamespacedJobID()
		if b.jobs[job] == evalID {
			delete(b.jobs, job)
		}
		if re, ok := b.requeue[token]; ok {
			delete(b.requeue, token)
			// Compete with the job's waiting evals on equal terms below.
			if _, held := b.evals[re.ID]; !held {
				b.evals[re.ID] = 0
				b.admitLocked(re)
			}
		}
		b.promotePendingLocked(job)
	})
}

func (b *EvalBroker) promotePendingLocked(job structs.NamespacedID) {
	h := b.pending[job]
	if h == nil {
		return
	}
	if _, busy := b.jobs[job]; busy {
		// A requeued eval took the slot; let it finish first, then the
		// newest of the rest (including it) wins.
		return
	}
	delete(b.pending, job)
	newest := h.pop()
	b.pendingCount -= 1 + h.Len()
	for h.Len() > 0 {
		old := h.pop()
		delete(b.evals, old.ID)
		b.cancelable = append(b.cancelable, old)
	}
	b.jobs[job] = newest.ID
	b.readyLocked(newest.Type, newest)
}

// Nack records that the worker gave up on the eval. It is delivered again
// after a delay, or moved to the failed queue once it reached the delivery
// limit. The job stays busy meanwhile.
func (b *EvalBroker) Nack(evalID, token string) error {
	return b.withOutstanding(evalID, token, b.nackLocked)
}

func (b *EvalBroker) nackLocked(u *unackedEval) {
	u.timer.Stop()
	id := u.eval.ID
	delete(b.unack, id)
	delete(b.requeue, u.token)
	deliveries := b.evals[id]
	if deliveries >= b.cfg.DeliveryLimit {
		b.readyLocked(failedQueue, u.eval)
		return
	}
	delay := b.cfg.SubsequentNackDelay
	if deliveries <= 1 {
		delay = b.cfg.InitialNackDelay
	}
	if delay <= 0 {
		b.readyLocked(u.eval.Type, u.eval)
		return
	}
	w := &nackWaitingEval{eval: u.eval}
	b.nackWait[id] = w
	w.timer = b.cfg.Clock.AfterFunc(delay, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.nackWait[id] != w {
			return // flushed since
		}
		delete(b.nackWait, id)
		b.readyLocked(w.eval.Type, w.eval)
	})
}

// Return gives back an eval whose lease never reached its holder (the
// caller of a dequeue went away before the answer): it is ready again at
// once, as if never dequeued. Unlike a nack it waits for no nack delay and
// does not count as a delivery: no worker tried it.
func (b *EvalBroker) Return(evalID, token string) error {
	return b.withOutstanding(evalID, token, func(u *unackedEval) {
		u.timer.Stop()
		id := u.eval.ID
		delete(b.unack, id)
		delete(b.requeue, u.token)
		if b.evals[id] > 0 {
			b.evals[id]--
		}
		b.readyLocked(u.eval.Type, u.eval)
	})
}

// Outstanding returns the token of the worker holding the eval.
func (b *EvalBroker) Outstanding(evalID string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.unack[evalID]
	if !ok {
		return "", false
	}
	return u.token, true
}

// OutstandingToken returns the eval that token holds. Endpoints use it to
// check a worker's writes about evals other than the one it holds (the
// follow-ups it creates, the outdated evals it cancels).
func (b *EvalBroker) OutstandingToken(token string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, u := range b.unack {
		if u.token == token {
			return id, true
		}
	}
	return "", false
}

// OutstandingReset restarts the eval's nack timeout: the worker showed it
// is still making progress. It leaves a paused timeout paused.
func (b *EvalBroker) OutstandingReset(evalID, token string) error {
	return b.withOutstanding(evalID, token, func(u *unackedEval) {
		if !u.paused {
			b.armNackTimerLocked(u)
		}
	})
}

// PauseNackTimeout stops the eval's nack timeout while its plan waits in
// the plan queue or in raft: the worker is blocked on the leader then, and
// a slow commit must not make the eval be delivered twice.
func (b *EvalBroker) PauseNackTimeout(evalID, token string) error {
	return b.withOutstanding(evalID, token, func(u *unackedEval) {
		u.timer.Stop()
		u.gen++
		u.paused = true
	})
}

// ResumeNackTimeout restarts a paused nack timeout from its full length.
func (b *EvalBroker) ResumeNackTimeout(evalID, token string) error {
	return b.withOutstanding(evalID, token, func(u *unackedEval) {
		u.paused = false
		b.armNackTimerLocked(u)
	})
}

// Cancelable removes and returns up to batch superseded evals, which the
// leader marks canceled in the state store.
func (b *EvalBroker) Cancelable(batch int) []*structs.Evaluation {
	b.mu.Lock()
	defer b.mu.Unlock()
	if batch > len(b.cancelable) {
		batch = len(b.cancelable)
	}
	out := append([]*structs.Evaluation(nil), b.cancelable[:batch]...)
	b.cancelable = b.cancelable[batch:]
	return out
}

// Stats counts the broker's queues.
func (b *EvalBroker) Stats() *structs.BrokerStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &structs.BrokerStats{
		TotalBlocked: b.pendingCount,
		TotalUnacked: len(b.unack),
		TotalWaiting: len(b.nackWait),
		DelayedEvals: map[string]*structs.Evaluation{},
		ByScheduler:  map[string]*structs.SchedulerStats{},
	}
	byType := func(t string) *structs.SchedulerStats {
		st := s.ByScheduler[t]
		if st == nil {
			st = &structs.SchedulerStats{}
			s.ByScheduler[t] = st
		}
		return st
	}
	for t, h := range b.ready {
		if t == failedQueue {
			s.TotalFailed += h.Len()
			continue
		}
		s.TotalReady += h.Len()
		if h.Len() > 0 {
			byType(t).Ready += h.Len()
		}
	}
	for _, u := range b.unack {
		byType(u.eval.Type).Unacked++
	}
	for _, it := range b.delayed.items {
		s.DelayedEvals[it.eval.ID] = it.eval
	}
	return s
}

// armDelayTimerLocked points the delay timer at the earliest WaitUntil.
func (b *EvalBroker) armDelayTimerLocked() {
	if b.delayed.Len() == 0 {
		if b.delayTimer != nil {
			b.delayTimer.Stop()
		}
		return
	}
	if b.delayTimer != nil {
		b.delayTimer.Stop()
	}
	b.delayTimer = b.cfg.Clock.AfterFuncAt(b.delayed.peek().WaitUntil, b.releaseDelayed)
}

// releaseDelayed admits every delayed eval whose time has come.
func (b *EvalBroker) releaseDelayed() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return
	}
	now := b.cfg.Clock.Now()
	for b.delayed.Len() > 0 && !b.delayed.peek().WaitUntil.After(now) {
		b.admitLocked(b.delayed.pop())
	}
	b.armDelayTimerLocked()
}
