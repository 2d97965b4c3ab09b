package nomad

import (
	"context"
	"math/rand"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/structs"
)

// heartbeater keeps one timer per node on the leader. A node that does not
// heartbeat within its TTL plus the grace period is marked down, or
// disconnected when some of its allocations' groups allow a disconnect
// window; either change creates node-update evals for the node's jobs.
//
// TTLs grow with the number of nodes so the fleet's total heartbeat rate
// stays under max_heartbeats_per_second, with a random stagger so that
// clients do not synchronise.
//
// When many timers expire together (say the leader lost its network to a
// rack), invalidations are queued and applied at most
// MaxNodeDownPerSecond per second: a short split then marks a bounded number
// of nodes down before the nodes' heartbeats resume and the queue drops them
// (a queued node that heartbeated again is skipped).
//
// Ownership: run owns the expiry queue; timers only push node IDs to it.
type heartbeater struct {
	srv    *Server
	logger hclog.Logger
	clock  Clock

	mu      sync.Mutex
	timers  map[string]Timer
	expired chan string
	rng     *rand.Rand
}

func newHeartbeater(s *Server) *heartbeater {
	return &heartbeater{
		srv:     s,
		logger:  s.logger.Named("heartbeat"),
		clock:   s.clock,
		timers:  map[string]Timer{},
		expired: make(chan string, 4096),
		rng:     rand.New(rand.NewSource(time.Now().UnixNano())),
	}
}

// run arms a failover timer for every live node, then applies expiries at
// the bounded rate until the leader context ends.
func (h *heartbeater) run(ctx context.Context) {
	h.initializeTimers()
	defer h.clearAll()
	interval := time.Duration(float64(time.Second) / h.srv.config.MaxNodeDownPerSecond)
	for {
		select {
		case <-ctx.Done():
			return
		case nodeID := <-h.expired:
			h.invalidate(nodeID)
			if !h.wait(ctx, interval) {
				return
			}
		}
	}
}

// wait pauses for d on the injected clock.
func (h *heartbeater) wait(ctx context.Context, d time.Duration) bool {
	return sleepCtx(ctx, h.clock, d)
}

// initializeTimers gives every node that is not down the failover TTL: an
// election must not mark the fleet down before clients find the new leader.
func (h *heartbeater) initializeTimers() {
	it, err := h.srv.State().Nodes(nil)
	if err != nil {
		h.logger.Error("listing nodes for heartbeat timers", "error", err)
		return
	}
	ttl := h.srv.config.FailoverHeartbeatTTL
	for raw := it.Next(); raw != nil; raw = it.Next() {
		node := raw.(*structs.Node)
		if node.Status == structs.NodeStatusDown || node.Status == structs.NodeStatusDisconnected {
			continue
		}
		h.arm(node.ID, ttl)
	}
}

// resetTTL is called for every heartbeat: it returns the TTL the client
// must beat and re-arms the node's timer for TTL plus grace.
func (h *heartbeater) resetTTL(nodeID string, numNodes int) time.Duration {
	cfg := h.srv.config
	ttl := cfg.MinHeartbeatTTL
	if scaled := time.Duration(float64(numNodes) / cfg.MaxHeartbeatsPerSecond * float64(time.Second)); scaled > ttl {
		ttl = scaled
	}
	h.mu.Lock()
	ttl += time.Duration(h.rng.Int63n(int64(ttl)))
	h.mu.Unlock()
	h.arm(nodeID, ttl+cfg.HeartbeatGrace)
	return ttl
}

func (h *heartbeater) arm(nodeID string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.timers[nodeID]; ok {
		t.Stop()
	}
	h.timers[nodeID] = h.clock.AfterFunc(d, func() { h.expire(nodeID) })
}

func (h *heartbeater) expire(nodeID string) {
	h.mu.Lock()
	delete(h.timers, nodeID)
	h.mu.Unlock()
	select {
	case h.expired <- nodeID:
	default:
		// The queue is full: the timer re-fires shortly.
		h.arm(nodeID, time.Second)
	}
}

// clear forgets a node (deregistered).
func (h *heartbeater) clear(nodeID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, ok := h.timers[nodeID]; ok {
		t.Stop()
		delete(h.timers, nodeID)
	}
}

func (h *heartbeater) clearAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, t := range h.timers {
		t.Stop()
		delete(h.timers, id)
	}
}

// armed reports whether the node has a live timer (it heartbeated since
// expiring).
func (h *heartbeater) armed(nodeID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.timers[nodeID]
	return ok
}

// invalidate marks a node whose TTL expired down or disconnected.
func (h *heartbeater) invalidate(nodeID string) {
	if h.armed(nodeID) {
		return // it heartbeated while queued
	}
	st := h.srv.State()
	node, err := st.NodeByID(nil, nodeID)
	if err != nil || node == nil {
		return
	}
	if node.Status == structs.NodeStatusDown || node.Status == structs.NodeStatusDisconnected {
		return
	}
	allocs, err := st.AllocsByNode(nil, nodeID)
	if err != nil {
		h.logger.Error("reading node allocs", "node", nodeID, "error", err)
		return
	}
	status := structs.NodeStatusDown
	for _, a := range allocs {
		if !a.TerminalStatus() && a.SupportsDisconnect() {
			status = structs.NodeStatusDisconnected
			break
		}
	}
	now := h.clock.Now()
	req := &structs.NodeUpdateStatusRequest{
		NodeID:    nodeID,
		Status:    status,
		UpdatedAt: now.Unix(),
		NodeEvent: &structs.NodeEvent{Message: "Node heartbeat missed", Subsystem: structs.NodeEventSubsystemCluster, Timestamp: now},
		Evals:     nodeEvals(node, allocs, now),
	}
	if _, _, err := h.srv.raftApply(structs.NodeUpdateStatusRequestType, req); err != nil {
		h.logger.Error("marking node after missed heartbeat", "node", nodeID, "status", status, "error", err)
		return
	}
	h.logger.Warn("node missed its heartbeat", "node", nodeID, "status", status, "evals", len(req.Evals))
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
