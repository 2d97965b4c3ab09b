package heartbeat

import (
	"context"
	"math/rand"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/structs"
)

// StateReader is what the heartbeater reads of the cluster's state: the
// nodes and the allocations on a node. Each read goes to the server's
// current state store (a raft snapshot restore replaces it), and what it
// returns is the store's: read-only.
type StateReader interface {
	// Nodes returns every node, in node ID order.
	Nodes() ([]*structs.Node, error)
	// NodeByID returns the node, or nil if there is none.
	NodeByID(nodeID string) (*structs.Node, error)
	// AllocsByNode returns the allocations placed on the node.
	AllocsByNode(nodeID string) ([]*structs.Allocation, error)
}

// StatusWriter commits node status changes.
type StatusWriter interface {
	// ApplyNodeStatuses commits the status changes of several nodes
	// (each with its evals) in one raft entry and returns once the FSM on
	// this server applied it, with the nodes the FSM skipped because they
	// changed after the heartbeater read them (their ModifyIndex is no
	// longer the one in NodeModifyIndexes).
	ApplyNodeStatuses(req *structs.NodeBatchUpdateStatusRequest) (skipped []string, err error)
}

// Config is what the heartbeater is made of: its view of the server, its
// tuning, and its clock and randomness, so a test can drive both.
type Config struct {
	// State and Writer are the heartbeater's view of the server. Run's
	// goroutine reads and writes through them; ArmDisconnected reads on
	// its caller's.
	State  StateReader
	Writer StatusWriter

	// MinHeartbeatTTL, MaxHeartbeatsPerSecond, HeartbeatGrace,
	// FailoverHeartbeatTTL and MaxNodeDownPerSecond are the server
	// Config's fields of the same names.
	MinHeartbeatTTL        time.Duration
	MaxHeartbeatsPerSecond float64
	HeartbeatGrace         time.Duration
	FailoverHeartbeatTTL   time.Duration
	MaxNodeDownPerSecond   float64

	// Clock is required: every deadline, the stall watchdog and the
	// pacing of node-down writes run on it.
	Clock  clock.Clock
	Logger hclog.Logger
	// Rand staggers TTLs; it is required. The heartbeater owns it from
	// then on (it is not safe for concurrent use).
	Rand *rand.Rand
	// Metrics times each invalidation (nomad.nomad.heartbeat.invalidate);
	// nil drops it.
	Metrics *metrics.Metrics
	// InternID returns the state store's shared copy of a node ID (the
	// server passes nomad/state's InternString). A node's deadline lives
	// as long as the node, so it keeps that copy rather than a second one
	// decoded from the request that armed it. Nil keeps the ID as given.
	InternID func(string) string
}

// invalidateRetry is how soon a node whose status change failed to commit
// is looked at again (while this server still leads), so a transient raft
// error does not leave it without a timer.
const invalidateRetry = 5 * time.Second

// Heartbeater keeps a deadline per node on the leader and marks a node
// that misses it down or disconnected (see the package comment). The
// server creates one for its lifetime; Run enables it for one term of
// leadership. While disabled it arms no timers.
//
// Ownership: Run owns the expiry queue; the wake only pushes expiries to
// it, or moves a deadline on when a stall covers it. Everything else (the
// deadlines, the wake, the watchdog, the stall record) is under mu.
// Lock order: a node lock, then mu. Moving a deadline, which is all a
// stall window does, needs only mu: it decides no status. A node's
// "timer" below is its deadline.
type Heartbeater struct {
	cfg    Config
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

	// Stall detection (stall.go).
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

// New returns a disabled heartbeater; the leader runs it with Run.
// cfg.Clock and cfg.Rand are required.
func New(cfg Config) *Heartbeater {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if cfg.InternID == nil {
		cfg.InternID = func(id string) string { return id }
	}
	cfg.Metrics = telemetry.OrDiscard(cfg.Metrics)
	return &Heartbeater{
		cfg:     cfg,
		logger:  logger,
		clock:   cfg.Clock,
		epoch:   cfg.Clock.Now(),
		timers:  map[string]*nodeDeadline{},
		expired: make(chan expiry, 4096),
		rng:     cfg.Rand,
	}
}

// Run enables the heartbeater, arms a failover timer for every node that
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
func (h *Heartbeater) Run(ctx context.Context) {
	h.SetEnabled(true)
	defer h.SetEnabled(false)
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

// SetEnabled turns timer arming on or off. Turning it on starts the stall
// watchdog. Turning it off stops every timer and empties the expiry queue:
// the next term starts from state. Run calls it at the start and end of
// its term; enabled without Run, timers are armed and counted but expiries
// are not applied, which only a test of what is armed wants.
func (h *Heartbeater) SetEnabled(enabled bool) {
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
func (h *Heartbeater) wait(ctx context.Context, d time.Duration) bool {
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
func (h *Heartbeater) initializeTimers() {
	st := h.cfg.State
	nodes, err := st.Nodes()
	if err != nil {
		h.logger.Error("listing nodes for heartbeat timers", "error", err)
		return
	}
	var live []*structs.Node
	for _, node := range nodes {
		if node.Status != structs.NodeStatusDown {
			live = append(live, node)
		}
	}
	ttl := h.failoverTTL(len(live))
	now := h.clock.Now()
	for _, node := range live {
		d := ttl
		if node.Status == structs.NodeStatusDisconnected {
			allocs, err := st.AllocsByNode(node.ID)
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
func (h *Heartbeater) failoverTTL(numNodes int) time.Duration {
	return max(h.cfg.FailoverHeartbeatTTL, 2*h.baseTTL(numNodes)+h.cfg.HeartbeatGrace)
}

// Tracked returns how many nodes have a heartbeat timer: the live fleet
// the TTL is scaled to. Counting timers keeps each heartbeat O(1) instead
// of walking the nodes table.
func (h *Heartbeater) Tracked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.timers)
}

// ResetTTL is called for every heartbeat, with the node's lock held
// (LockNode) and numNodes the fleet the TTL is scaled to: it returns the
// TTL the client must beat and re-arms the node's timer for TTL plus
// grace.
func (h *Heartbeater) ResetTTL(nodeID string, numNodes int) time.Duration {
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
func (h *Heartbeater) baseTTL(numNodes int) time.Duration {
	cfg := h.cfg
	scaled := time.Duration(float64(numNodes) / cfg.MaxHeartbeatsPerSecond * float64(time.Second))
	return max(cfg.MinHeartbeatTTL, scaled)
}

// arm (re)starts the node's timer; a no-op while disabled.
func (h *Heartbeater) arm(nodeID string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armLocked(nodeID, d, 0)
}

// armIfUnarmed starts the node's timer unless one is running.
func (h *Heartbeater) armIfUnarmed(nodeID string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.timers[nodeID]; !ok {
		h.armLocked(nodeID, d, 0)
	}
}

// armLocked (re)sets the node's deadline to d from now; windows counts
// the stall windows in a row it continues.
func (h *Heartbeater) armLocked(nodeID string, d time.Duration, windows int) {
	if !h.enabled {
		return
	}
	h.setDeadlineLocked(nodeID, h.clock.Now().Add(d), windows)
}

// Clear forgets a node (deregistered, or marked down by an operator).
func (h *Heartbeater) Clear(nodeID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeDeadlineLocked(nodeID)
}

// Armed reports whether the node has a live timer (it heartbeated since
// expiring).
func (h *Heartbeater) Armed(nodeID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.timers[nodeID]
	return ok
}

// Deadline returns the deadline of the node's timer, if it has one.
func (h *Heartbeater) Deadline(nodeID string) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	nd, ok := h.timers[nodeID]
	if !ok {
		return time.Time{}, false
	}
	return h.deadlineOf(nd), true
}

// LockNode takes the node's status lock (see the package comment) and
// returns its release. Whoever reads a node's status to write a new one
// (a heartbeat, a registration) holds it until the write has committed
// and the node's timer is re-armed.
func (h *Heartbeater) LockNode(nodeID string) func() { return h.nodeLocks.lock(nodeID) }

// LockContenders reports how many callers hold or wait for the node's
// status lock, so a test can tell that a heartbeat waits behind an
// invalidation.
func (h *Heartbeater) LockContenders(nodeID string) int { return h.nodeLocks.contenders(nodeID) }

// ArmDisconnected arms a disconnected node's timer for the rest of its
// disconnect window. The caller holds the node's lock.
func (h *Heartbeater) ArmDisconnected(nodeID string) {
	st := h.cfg.State
	node, err := st.NodeByID(nodeID)
	if err != nil || node == nil {
		return
	}
	allocs, err := st.AllocsByNode(nodeID)
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
func (h *Heartbeater) disconnectDeadline(node *structs.Node, allocs []*structs.Allocation, now time.Time) time.Time {
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
func (h *Heartbeater) decideInvalidation(e expiry) (*structs.NodeUpdateStatusRequest, uint64) {
	nodeID := e.nodeID
	if h.Armed(nodeID) {
		return nil, 0 // it heartbeated while queued
	}
	st := h.cfg.State
	node, err := st.NodeByID(nodeID)
	if err != nil || node == nil || node.Status == structs.NodeStatusDown {
		return nil, 0
	}
	if h.stalledOver(e) {
		return nil, 0
	}
	allocs, err := st.AllocsByNode(nodeID)
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
		Evals:     NodeEvals(node, allocs, now),
	}, node.ModifyIndex
}

// stalledOver gives a queued expiry a fresh window if a stall found since
// it was queued covers its deadline, and reports whether it did. Only the
// watchdog's gap counts here, not the expiry's time in the queue (see
// stall.go). The caller holds the node's lock.
func (h *Heartbeater) stalledOver(e expiry) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.enabled {
		return false
	}
	h.observeLocked(h.clock.Now(), time.Time{})
	return h.stallWindowLocked(e.nodeID, e.deadline, e.windows)
}

// NodeEvals makes one node-update eval per job with a non-terminal alloc on
// the node, so the scheduler decides what the node's change means for it.
// They are the evals of a node that missed its heartbeat; the server's
// endpoints give the same to a node that goes away or comes back.
func NodeEvals(node *structs.Node, allocs []*structs.Allocation, now time.Time) []*structs.Evaluation {
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
