package broker

import (
	"context"
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// BlockedEvalsConfig configures BlockedEvals.
type BlockedEvalsConfig struct {
	Clock  clock.Clock
	Logger hclog.Logger
}

// BlockedStats counts the parked evals.
type BlockedStats struct {
	// TotalBlocked counts every parked eval.
	TotalBlocked int
	// TotalEscaped counts evals whose constraints the computed node class
	// cannot capture; any capacity change wakes them.
	TotalEscaped int
	// TotalMaxPlans counts evals parked after their scheduler ran out of
	// plan attempts; UnblockFailed retries them.
	TotalMaxPlans int
	// TotalNode counts evals that name a node (system jobs); UnblockNode
	// wakes them.
	TotalNode int
}

// BlockedEvals parks evaluations that could not place everything until
// capacity that might help appears, so they are not rescheduled in a loop.
// It keeps one eval per job: a newer one replaces an older, which becomes a
// duplicate for the leader to cancel (GetDuplicates).
//
// Unblocks are coalesced: Unblock and UnblockNode only record what changed
// and kick one goroutine, which wakes the matching evals in one pass. A
// burst of node updates therefore costs one scan and one EnqueueAll instead
// of one per update. The goroutine is owned by SetEnabled: enabling starts
// it, disabling stops it and waits for it.
//
// The race between a scheduler's snapshot and its eval being parked is
// closed with unblock indexes: Unblock records, per node class (and per
// node), the highest raft index at which capacity changed. An eval whose
// SnapshotIndex is older than a change it could use is enqueued at once by
// Block instead of being parked, since its scheduler never saw that change.
//
// Lock order: BlockedEvals.mu is never held while calling into the broker.
type BlockedEvals struct {
	broker *EvalBroker
	cfg    BlockedEvalsConfig

	lifeMu sync.Mutex // serialises SetEnabled
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	enabled bool
	evals   map[string]*blockedEval // parked evals by ID
	jobs    map[structs.NamespacedID]string
	byNode  map[string]map[string]struct{} // node ID -> parked eval IDs

	classIndex map[string]uint64 // highest unblock index per computed class
	nodeIndex  map[string]uint64 // highest unblock index per node, bounded (see recordNodeUnblockLocked)
	// nodeIndexFloor is the highest index among the node entries
	// forgotten to bound nodeIndex: any node may have changed up to it.
	nodeIndexFloor uint64

	// Unblocks recorded but not yet processed by the loop.
	pendingClasses map[string]uint64
	pendingNodes   map[string]uint64
	kick           chan struct{} // capacity 1: a pending wake-up for the loop

	duplicates []*structs.Evaluation
	dupNotify  chan struct{} // closed and replaced when duplicates are added
}

type blockedEval struct {
	eval  *structs.Evaluation
	token string
}

// NewBlockedEvals returns a disabled tracker that wakes evals into broker.
func NewBlockedEvals(broker *EvalBroker, cfg BlockedEvalsConfig) *BlockedEvals {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	b := &BlockedEvals{broker: broker, cfg: cfg, kick: make(chan struct{}, 1), dupNotify: make(chan struct{})}
	b.resetLocked()
	return b
}

func (b *BlockedEvals) resetLocked() {
	b.evals = map[string]*blockedEval{}
	b.jobs = map[structs.NamespacedID]string{}
	b.byNode = map[string]map[string]struct{}{}
	b.classIndex = map[string]uint64{}
	b.nodeIndex = map[string]uint64{}
	b.nodeIndexFloor = 0
	b.pendingClasses = map[string]uint64{}
	b.pendingNodes = map[string]uint64{}
	b.duplicates = nil
}

// SetEnabled starts tracking when this server becomes leader, and stops
// and forgets everything when it stops being leader (the evals stay
// blocked in the state store; the next leader parks them again).
func (b *BlockedEvals) SetEnabled(enabled bool) {
	b.lifeMu.Lock()
	defer b.lifeMu.Unlock()
	b.mu.Lock()
	was := b.enabled
	b.enabled = enabled
	b.mu.Unlock()
	switch {
	case enabled && !was:
		ctx, cancel := context.WithCancel(context.Background())
		b.cancel, b.done = cancel, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			b.run(ctx)
		}(b.done)
	case !enabled && was:
		b.cancel()
		<-b.done
		b.mu.Lock()
		b.resetLocked()
		close(b.dupNotify) // wake GetDuplicates callers
		b.dupNotify = make(chan struct{})
		b.mu.Unlock()
	}
}

// Enabled reports whether evals are being tracked.
func (b *BlockedEvals) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

// Block parks an eval the FSM wrote with status blocked.
func (b *BlockedEvals) Block(eval *structs.Evaluation) { b.block(eval, "") }

// Reblock parks an eval again that a worker holds with token (it was woken,
// and its scheduler still cannot place everything). If it is woken before
// the worker acks, the broker holds it until the ack.
func (b *BlockedEvals) Reblock(eval *structs.Evaluation, token string) { b.block(eval, token) }

func (b *BlockedEvals) block(eval *structs.Evaluation, token string) {
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return
	}
	if w, ok := b.evals[eval.ID]; ok {
		// Parked already (the FSM's Block ran before the endpoint's
		// Reblock): keep the token, so a wake-up waits for the worker.
		if token != "" {
			w.token = token
		}
		b.mu.Unlock()
		return
	}
	job := eval.NamespacedJobID()
	if id, ok := b.jobs[job]; ok {
		existing := b.evals[id]
		if existing.eval.CreateIndex > eval.CreateIndex {
			b.addDuplicateLocked(eval) // a newer eval already waits
			b.mu.Unlock()
			return
		}
		b.removeLocked(existing.eval)
		b.addDuplicateLocked(existing.eval)
	}
	if b.missedUnblockLocked(eval) {
		b.mu.Unlock()
		b.cfg.Logger.Debug("eval missed an unblock since its snapshot, enqueuing", "eval_id", eval.ID, "snapshot_index", eval.SnapshotIndex)
		b.broker.EnqueueAll(map[*structs.Evaluation]string{eval: token})
		return
	}
	b.evals[eval.ID] = &blockedEval{eval: eval, token: token}
	b.jobs[job] = eval.ID
	if eval.NodeID != "" {
		set := b.byNode[eval.NodeID]
		if set == nil {
			set = map[string]struct{}{}
			b.byNode[eval.NodeID] = set
		}
		set[eval.ID] = struct{}{}
	}
	b.mu.Unlock()
}

// missedUnblockLocked reports whether capacity the eval could use changed
// after the snapshot its scheduler saw.
func (b *BlockedEvals) missedUnblockLocked(eval *structs.Evaluation) bool {
	for class, index := range b.classIndex {
		if index > eval.SnapshotIndex && wantsClass(eval, class) {
			return true
		}
	}
	return eval.NodeID != "" && b.nodeUnblockIndexLocked(eval.NodeID) > eval.SnapshotIndex
}

// wantsClass reports whether capacity on nodes of class may help eval: not
// when its scheduler found the class ineligible, always when the class was
// unknown to it or its constraints escape computed classes.
func wantsClass(eval *structs.Evaluation, class string) bool {
	if eval.EscapedComputedClass {
		return true
	}
	eligible, known := eval.ClassEligibility[class]
	return !known || eligible
}

func (b *BlockedEvals) removeLocked(eval *structs.Evaluation) {
	delete(b.evals, eval.ID)
	job := eval.NamespacedJobID()
	if b.jobs[job] == eval.ID {
		delete(b.jobs, job)
	}
	if set := b.byNode[eval.NodeID]; set != nil {
		delete(set, eval.ID)
		if len(set) == 0 {
			delete(b.byNode, eval.NodeID)
		}
	}
}

func (b *BlockedEvals) addDuplicateLocked(eval *structs.Evaluation) {
	b.duplicates = append(b.duplicates, eval)
	close(b.dupNotify)
	b.dupNotify = make(chan struct{})
}

// Untrack forgets the job's parked eval because a later eval for the job
// completed with everything placed (or the job is gone). The parked eval
// has nothing left to do and becomes a duplicate, so the leader cancels it
// instead of leaving it blocked in the state store.
func (b *BlockedEvals) Untrack(namespace, jobID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id, ok := b.jobs[structs.NamespacedID{ID: jobID, Namespace: namespace}]
	if !ok {
		return
	}
	e := b.evals[id].eval
	b.removeLocked(e)
	b.addDuplicateLocked(e)
}

// Unblock records that capacity may have appeared on nodes of
// computedClass at raft index (a node joined or became eligible, an alloc
// on such a node became client-terminal). The matching evals are woken
// asynchronously, together with other unblocks that arrive meanwhile.
func (b *BlockedEvals) Unblock(computedClass string, index uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return
	}
	if index > b.classIndex[computedClass] {
		b.classIndex[computedClass] = index
	}
	if index > b.pendingClasses[computedClass] {
		b.pendingClasses[computedClass] = index
	}
	b.kickLocked()
}

// UnblockNode records that nodeID changed at index, waking the evals that
// name that node (system jobs, which place per node).
func (b *BlockedEvals) UnblockNode(nodeID string, index uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return
	}
	b.recordNodeUnblockLocked(nodeID, index)
	if index > b.pendingNodes[nodeID] {
		b.pendingNodes[nodeID] = index
	}
	b.kickLocked()
}

func (b *BlockedEvals) kickLocked() {
	select {
	case b.kick <- struct{}{}:
	default: // a wake-up is already pending; it will see this unblock too
	}
}

// UnblockFailed wakes every eval parked because its scheduler ran out of
// plan attempts. Those evals failed on contention, not capacity, so no
// capacity change would wake them; the leader calls this periodically.
func (b *BlockedEvals) UnblockFailed() {
	b.mu.Lock()
	woken := map[*structs.Evaluation]string{}
	for _, w := range b.evals {
		if w.eval.TriggeredBy == structs.EvalTriggerMaxPlans {
			woken[w.eval] = w.token
		}
	}
	for e := range woken {
		b.removeLocked(e)
	}
	b.mu.Unlock()
	if len(woken) > 0 {
		b.broker.EnqueueAll(woken)
	}
}

// run is the unblock loop; SetEnabled owns it.
func (b *BlockedEvals) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-b.kick:
		}
		b.mu.Lock()
		woken := b.collectUnblockedLocked()
		b.mu.Unlock()
		if len(woken) > 0 {
			b.cfg.Logger.Debug("unblocking evals", "count", len(woken))
			b.broker.EnqueueAll(woken)
		}
	}
}

// collectUnblockedLocked takes the pending unblocks and removes the evals
// they wake. An eval whose snapshot already includes a change is not woken
// by it: its scheduler already saw that capacity.
func (b *BlockedEvals) collectUnblockedLocked() map[*structs.Evaluation]string {
	classes, nodes := b.pendingClasses, b.pendingNodes
	b.pendingClasses, b.pendingNodes = map[string]uint64{}, map[string]uint64{}
	woken := map[*structs.Evaluation]string{}
	if len(classes) > 0 {
		for _, w := range b.evals {
			for class, index := range classes {
				if index > w.eval.SnapshotIndex && wantsClass(w.eval, class) {
					woken[w.eval] = w.token
					break
				}
			}
		}
	}
	for node, index := range nodes {
		for id := range b.byNode[node] {
			if w := b.evals[id]; index > w.eval.SnapshotIndex {
				woken[w.eval] = w.token
			}
		}
	}
	for e := range woken {
		b.removeLocked(e)
	}
	return woken
}

// Stats counts the parked evals.
func (b *BlockedEvals) Stats() *BlockedStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &BlockedStats{TotalBlocked: len(b.evals)}
	for _, w := range b.evals {
		if w.eval.EscapedComputedClass {
			s.TotalEscaped++
		}
		if w.eval.TriggeredBy == structs.EvalTriggerMaxPlans {
			s.TotalMaxPlans++
		}
		if w.eval.NodeID != "" {
			s.TotalNode++
		}
	}
	return s
}

// GetDuplicates blocks until there are superseded evals to cancel, or ctx
// is done (then it returns nil), and removes and returns them.
func (b *BlockedEvals) GetDuplicates(ctx context.Context) []*structs.Evaluation {
	for {
		dups, wake := b.takeDuplicates()
		if len(dups) > 0 {
			return dups
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil
		}
	}
}

// takeDuplicates removes and returns the duplicates without waiting, and
// the channel that is closed when more arrive.
func (b *BlockedEvals) takeDuplicates() ([]*structs.Evaluation, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.duplicates
	b.duplicates = nil
	return out, b.dupNotify
}
