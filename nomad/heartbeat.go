package nomad

import (
	"context"
	"math/rand"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// heartbeaterDeps is what the heartbeater needs from the server: the
// state it reads nodes and allocations from, and a way to commit a node's
// new status. Tests give it a twin that wraps the server's.
type heartbeaterDeps interface {
	// State returns the current state store (it changes after a raft
	// snapshot restore).
	State() *state.StateStore
	// ApplyNodeStatuses commits the status changes of several nodes (each
	// with its evals) in one raft entry and returns once the FSM on this
	// server applied it, with the nodes the FSM skipped because they
	// changed after the heartbeater read them.
	ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) (skipped []string, err error)
}

// heartbeatConfig tunes the heartbeater and supplies its clock and its
// randomness, so a test can drive both.
type heartbeatConfig struct {
	// MinHeartbeatTTL, MaxHeartbeatsPerSecond, HeartbeatGrace,
	// FailoverHeartbeatTTL and MaxNodeDownPerSecond are the server
	// Config's fields of the same names.
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond float64
	HeartbeatGrace         time.Duration
	FailoverHeartbeatTTL   time.Duration
	MaxNodeDownPerSecond   float64

	Clock  clock.Clock
	Logger hclog.Logger
	// Rand staggers TTLs. The heartbeater owns it from then on (it is
	// not safe for concurrent use).
	Rand *rand.Rand
	// Metrics times each invalidation (nomad.nomad.heartbeat.invalidate);
	// nil drops it.
	Metrics *metrics.Metrics
}

// invalidateRetry is how soon a node whose status change failed to commit
// is looked at again (while this server still leads), so a transient raft
// error does not leave it without a timer.
const invalidateRetry = 5 * time.Second

// heartbeater keeps a deadline per node on the leader (one heap and one
// clock timer for all of them, heartbeat_deadlines.go). A node that does not
// heartbeat within its TTL plus the grace period is marked down, or
// disconnected when some of its allocations' groups allow a disconnect
// window; either change creates node-update evals for the node's jobs. A
// disconnected node gets a second timer for the largest disconnect window
// of its allocations (disconnect.lost_after, plus grace): if it has not
// heartbeated by then it is marked down too.
//
// TTLs grow with the number of nodes so the fleet's total heartbeat rate
// stays under max_heartbeats_per_second, with a random stagger so that
// clients do not synchronise.
//
// When many timers expire together (say the leader lost its network to a
// rack), invalidations are queued and applied at most
// MaxNodeDownPerSecond per second: a short split then marks a bounded number
// of nodes down before the nodes' heartbeats resume and the queue drops them
// (a queued node that heartbeated again is skipped). Queued nodes are
// marked in batches, one raft entry each (heartbeat_batch.go), so the
// rate holds even where one commit takes longer than the interval.
//
// Every decision that reads a node's status and writes a new one (a
// heartbeat, a registration, an invalidation) holds that node's lock from
// the read until the write has committed and the timer is re-armed. So a
// heartbeat and an invalidation of the same node cannot interleave: either
// the heartbeat re-arms the timer first and the invalidation stands down,
// or the invalidation commits first and the heartbeat finds the node down
// and writes it ready again.
//
// A timer that runs late because the leader itself did not run (a
// stopped process, a suspended VM) is not the node's fault: each timer
// remembers its deadline, and a node whose deadline fell in such a stall,
// or within a grace after it, gets a fresh window (the longest TTL plus
// grace) instead of being invalidated, at most maxStallWindows times in a
// row. A node still silent through its fresh window expires on time like
// any other. The same holds for a disconnected node's second timer.
// heartbeat_stall.go says how a stall is told from a slow node.
//
// The server creates one heartbeater for its lifetime; run enables it for
// one term of leadership. While disabled it arms no timers.
//
// Ownership: run owns the expiry queue; the wake only pushes expiries to
// it, or moves a deadline on when a stall covers it. Everything else (the
// deadlines, the wake, the watchdog, the stall record) is under mu.
// Lock order: a node lock, then mu. Moving a deadline, which is all a
// stall window does, needs only mu: it decides no status. A node's
// "timer" below is its deadline.
type heartbeater struct {
	deps   heartbeaterDeps
	cfg    heartbeatConfig
	logger hclog.Logger
	clock  clock.Clock
	// epoch is the clock's time when the heartbeater was made; node
	// deadlines are kept as offsets from it (see nodeDeadline).
	epoch time.Time

	nodeLocks keyedMutex

	mu      sync.Mutex
	enabled bool
	timers  map[string]*nodeDeadline // each node's place in queue
	queue   deadlineHeap
	seq     uint64      // orders armings, so equal deadlines expire in arming order
	wake    clock.Timer // armed at wakeAt, no later than the earliest deadline; nil if none
	wakeAt  time.Time
	wakeGen uint64 // identifies the armed wake, so a stale callback is ignored
	waking  bool   // the wake's callback runs: it re-arms the wake itself
	expired chan expiry
	rng     *rand.Rand // under mu

	// Stall detection (heartbeat_stall.go).
	term     uint64      // identifies the watchdog of one term of leadership
	watchdog clock.Timer // re-arms itself every stallTick while enabled
	lastSeen time.Time   // when the heartbeater last ran, by any of its paths
	stall    stallRecord
}

// expiry is a due deadline waiting in the queue for invalidate.
type expiry struct {
	nodeID   string
	deadline time.Time
	windows  int
}

// newHeartbeater returns a disabled heartbeater; the leader runs it with
// run. cfg.Clock and cfg.Rand are required.
func newHeartbeater(deps heartbeaterDeps, cfg heartbeatConfig) *heartbeater {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	cfg.Metrics = telemetry.OrDiscard(cfg.Metrics)
	return &heartbeater{
		deps:    deps,
		cfg:     cfg,
		logger:  logger,
		clock:   cfg.Clock,
		epoch:   cfg.Clock.Now(),
		timers:  map[string]*nodeDeadline{},
		expired: make(chan expiry, 4096),
		rng:     cfg.Rand,
	}
}

// run enables the heartbeater, arms a failover timer for every node that
// is not down, then applies expiries at the bounded rate until the leader
// context ends; then it disables the heartbeater and forgets every timer.
// Only a status change counts against the rate: an expiry that turns out
// moot (the node heartbeated, or gets a stall window) costs no wait.
//
// Expiries are taken in batches of what is queued, up to batchLimit: a
// batch that marked k nodes is followed by a wait of k intervals, counted
// from the write's start, so a commit's own latency counts toward the
// interval rather than being added to it, and the rate holds in nodes per
// second whatever the commit latency (at 20/s: 20 nodes a second, in one
// entry a second once a backlog builds, rather than one entry per commit).
func (h *heartbeater) run(ctx context.Context) {
	h.setEnabled(true)
	defer h.setEnabled(false)
	h.initializeTimers()
	interval := time.Duration(float64(time.Second) / h.cfg.MaxNodeDownPerSecond)
	var lastWrite time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-h.expired:
			batch := h.gatherExpiries(e, h.batchLimit(lastWrite))
			start := h.clock.Now()
			marked := h.invalidateBatch(batch)
			if marked == 0 {
				continue
			}
			lastWrite = h.clock.Now().Sub(start)
			if d := time.Duration(marked)*interval - lastWrite; d > 0 && !h.wait(ctx, d) {
				return
			}
		}
	}
}

// setEnabled turns timer arming on or off. Turning it on starts the stall
// watchdog. Turning it off stops every timer and empties the expiry queue:
// the next term starts from state.
func (h *heartbeater) setEnabled(enabled bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.enabled = enabled
	h.stopWatchdogLocked()
	if enabled {
		h.startWatchdogLocked()
		return
	}
	h.clearDeadlinesLocked()
	for {
		select {
		case <-h.expired:
		default:
			return
		}
	}
}

// wait pauses for d on the injected clock.
func (h *heartbeater) wait(ctx context.Context, d time.Duration) bool {
	return clock.Sleep(ctx, h.clock, d)
}

// initializeTimers gives every node that is not down the failover TTL: an
// election must not mark the fleet down before clients find the new leader.
// The failover TTL is at least the longest TTL the last leader could have
// given a node, plus grace (failoverTTL): a client that heartbeated just
// before the election may rightly stay silent that long. A disconnected
// node gets the rest of its disconnect window instead when that is longer.
// A node that already heartbeated in this term keeps the timer its
// heartbeat armed.
func (h *heartbeater) initializeTimers() {
	st := h.deps.State()
	it, err := st.Nodes(nil)
	if err != nil {
		h.logger.Error("listing nodes for heartbeat timers", "error", err)
		return
	}
	var live []*structs.Node
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if node := raw.(*structs.Node); node.Status != structs.NodeStatusDown {
			live = append(live, node)
		}
	}
	ttl := h.failoverTTL(len(live))
	now := h.clock.Now()
	for _, node := range live {
		d := ttl
		if node.Status == structs.NodeStatusDisconnected {
			allocs, err := st.AllocsByNode(nil, node.ID)
			if err != nil {
				h.logger.Error("reading node allocs", "node", node.ID, "error", err)
			}
			if rest := h.disconnectDeadline(node, allocs, now).Sub(now); rest > d {
				d = rest
			}
		}
		h.armIfUnarmed(node.ID, d)
	}
}

// failoverTTL is the window a new leader gives each of numNodes live
// nodes: FailoverHeartbeatTTL, but never less than the longest TTL a
// heartbeat could have been answered with for that fleet (the base TTL
// and its stagger, up to twice the base) plus grace. A failover TTL set
// below that (the cluster benchmark's 30s against TTLs of up to 40s at
// 10,000 nodes) made every election mark live nodes down whose next
// heartbeat was simply not due yet, and their replacement and return
// loaded the servers into the next election.
func (h *heartbeater) failoverTTL(numNodes int) time.Duration {
	return max(h.cfg.FailoverHeartbeatTTL, 2*h.baseTTL(numNodes)+h.cfg.HeartbeatGrace)
}

// tracked returns how many nodes have a heartbeat timer: the live fleet
// the TTL is scaled to. Counting timers keeps each heartbeat O(1) instead
// of walking the nodes table.
func (h *heartbeater) tracked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.timers)
}

// resetTTL is called for every heartbeat: it returns the TTL the client
// must beat and re-arms the node's timer for TTL plus grace.
func (h *heartbeater) resetTTL(nodeID string, numNodes int) time.Duration {
	ttl := h.baseTTL(numNodes)
	h.mu.Lock()
	ttl += time.Duration(h.rng.Int63n(int64(ttl)))
	h.mu.Unlock()
	h.arm(nodeID, ttl+h.cfg.HeartbeatGrace)
	return ttl
}

// baseTTL is the TTL before the random stagger, which adds up to as much
// again: MinHeartbeatTTL, or more when the fleet would otherwise beat
// faster than MaxHeartbeatsPerSecond.
func (h *heartbeater) baseTTL(numNodes int) time.Duration {
	cfg := h.cfg
	scaled := time.Duration(float64(numNodes) / cfg.MaxHeartbeatsPerSecond * float64(time.Second))
	return max(cfg.MinHeartbeatTTL, scaled)
}

// arm (re)starts the node's timer; a no-op while disabled.
func (h *heartbeater) arm(nodeID string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armLocked(nodeID, d, 0)
}

// armIfUnarmed starts the node's timer unless one is running.
func (h *heartbeater) armIfUnarmed(nodeID string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.timers[nodeID]; !ok {
		h.armLocked(nodeID, d, 0)
	}
}

// armLocked (re)sets the node's deadline to d from now; windows counts
// the stall windows in a row it continues.
func (h *heartbeater) armLocked(nodeID string, d time.Duration, windows int) {
	if !h.enabled {
		return
	}
	h.setDeadlineLocked(nodeID, h.clock.Now().Add(d), windows)
}

// clear forgets a node (deregistered, or marked down by an operator).
func (h *heartbeater) clear(nodeID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeDeadlineLocked(nodeID)
}

// armed reports whether the node has a live timer (it heartbeated since
// expiring).
func (h *heartbeater) armed(nodeID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.timers[nodeID]
	return ok
}

// lockNode takes the node's status lock (see the type comment) and returns
// its release.
func (h *heartbeater) lockNode(nodeID string) func() { return h.nodeLocks.lock(nodeID) }

// armDisconnected arms a disconnected node's timer for the rest of its
// disconnect window. The caller holds the node's lock.
func (h *heartbeater) armDisconnected(nodeID string) {
	st := h.deps.State()
	node, err := st.NodeByID(nil, nodeID)
	if err != nil || node == nil {
		return
	}
	allocs, err := st.AllocsByNode(nil, nodeID)
	if err != nil {
		h.logger.Error("reading node allocs", "node", nodeID, "error", err)
	}
	now := h.clock.Now()
	h.arm(nodeID, max(h.disconnectDeadline(node, allocs, now).Sub(now), 0))
}

// disconnectDeadline returns when a disconnected node that has not
// heartbeated goes down: the largest disconnect.lost_after among its
// non-terminal allocations, plus grace, after it was marked disconnected
// (its StatusUpdatedAt, which a drain or eligibility change also moves, so
// such a change only lengthens the window). Its allocations' own windows
// are the scheduler's business; this only bounds how long the node stays
// disconnected.
func (h *heartbeater) disconnectDeadline(node *structs.Node, allocs []*structs.Allocation, now time.Time) time.Time {
	var window time.Duration
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		if d := a.DisconnectStrategy(); d != nil && d.LostAfter > window {
			window = d.LostAfter
		}
	}
	since := time.Unix(node.StatusUpdatedAt, 0)
	if since.After(now) {
		since = now // another server's clock ran ahead
	}
	return since.Add(window + h.cfg.HeartbeatGrace)
}

// decideInvalidation looks at a node whose timer expired: a ready (or
// initializing) node is to be marked down or disconnected; a disconnected
// node whose window has passed is to be marked down. It returns the
// status change, with the node's ModifyIndex as read, or nil when there
// is nothing to write (the node heartbeated while queued, is gone or
// already down, gets a stall window, or its disconnect window grew). The
// caller holds the node's lock, and keeps holding it until the change has
// committed.
func (h *heartbeater) decideInvalidation(e expiry) (*structs.NodeUpdateStatusRequest, uint64) {
	nodeID := e.nodeID
	if h.armed(nodeID) {
		return nil, 0 // it heartbeated while queued
	}
	st := h.deps.State()
	node, err := st.NodeByID(nil, nodeID)
	if err != nil || node == nil || node.Status == structs.NodeStatusDown {
		return nil, 0
	}
	if h.stalledOver(e) {
		return nil, 0
	}
	allocs, err := st.AllocsByNode(nil, nodeID)
	if err != nil {
		h.logger.Error("reading node allocs", "node", nodeID, "error", err)
		h.arm(nodeID, invalidateRetry)
		return nil, 0
	}
	now := h.clock.Now()
	status, msg := structs.NodeStatusDown, "Node heartbeat missed"
	switch node.Status {
	case structs.NodeStatusDisconnected:
		if deadline := h.disconnectDeadline(node, allocs, now); now.Before(deadline) {
			h.arm(nodeID, deadline.Sub(now)) // a window grew since the timer was armed
			return nil, 0
		}
		msg = "Node did not reconnect within its disconnect window"
	default:
		for _, a := range allocs {
			if !a.TerminalStatus() && a.SupportsDisconnect() {
				status = structs.NodeStatusDisconnected
				break
			}
		}
	}
	return &structs.NodeUpdateStatusRequest{
		NodeID:    nodeID,
		Status:    status,
		UpdatedAt: now.Unix(),
		NodeEvent: &structs.NodeEvent{Message: msg, Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now},
		Evals:     nodeEvals(node, allocs, now),
	}, node.ModifyIndex
}

// stalledOver gives a queued expiry a fresh window if a stall found since
// it was queued covers its deadline, and reports whether it did. Only the
// watchdog's gap counts here, not the expiry's time in the queue (see
// heartbeat_stall.go). The caller holds the node's lock.
func (h *heartbeater) stalledOver(e expiry) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.enabled {
		return false
	}
	h.observeLocked(h.clock.Now(), time.Time{})
	return h.stallWindowLocked(e.nodeID, e.deadline, e.windows)
}

// nodeEvals makes one node-update eval per job with a non-terminal alloc on
// the node, so the scheduler decides what the node's change means for it.
func nodeEvals(node *structs.Node, allocs []*structs.Allocation, now time.Time) []*structs.Evaluation {
	seen := map[structs.NamespacedID]bool{}
	var out []*structs.Evaluation
	for _, a := range allocs {
		if a.ClientTerminalStatus() || a.Job == nil {
			continue
		}
		key := a.NamespacedJobID()
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, &structs.Evaluation{
			ID: structs.GenerateUUID(), Namespace: a.Namespace, Priority: a.Job.Priority, Type: a.Job.Type,
			TriggeredBy: structs.EvalTriggerNodeUpdate, JobID: a.JobID, NodeID: node.ID,
			NodeModifyIndex: node.ModifyIndex, Status: structs.EvalStatusPending,
			CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
		})
	}
	return out
}
