package heartbeat

import (
	"math"
	"sort"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Marking nodes down in batches.
//
// One raft entry per node caps the node-down rate at one node per commit:
// with three servers under load a commit takes hundreds of milliseconds,
// so a 1,000-node disconnect took minutes however high
// max_node_down_per_second was set. The run loop therefore takes what is
// queued, up to batchLimit, and commits it as one entry: one FSM apply,
// one index. Nothing else changes per node: each gets its own status, node
// event and evals, decided by the same checks under its own lock as a
// single invalidation, and a node that heartbeated while queued is still
// left alone.
//
// The rate keeps meaning nodes per second. A batch that marked k nodes is
// followed by k intervals of quiet (counted from the write's start), so a
// backlog drains at the configured rate in about one entry per second. A
// batch is at most a second's worth of nodes, or more when one commit
// takes longer than a second, so that a slow leader still keeps up, and
// never more than maxNodeDownBatch, which bounds the entry's size.

// keyInvalidate times each batch of invalidations, from deciding the
// first node to the last entry's commit.
var keyInvalidate = []string{"nomad", "heartbeat", "invalidate"}

// maxNodeDownBatch bounds the nodes of one entry. With a node's evals
// (one per job on it) an update is a few hundred bytes to a few KB, so
// the bound keeps an entry well under a megabyte.
const maxNodeDownBatch = 256

// maxNodeDownEntryEvals bounds the evals of one entry (an eval encodes
// to a few hundred bytes): a batch of nodes that each run many jobs is
// committed as several entries, so it can never outgrow the raft entry
// limit and fail, be retried and fail again.
const maxNodeDownEntryEvals = 8192

// batchLimit is how many queued expiries the next batch may take: a
// second's worth at MaxNodeDownPerSecond, or the nodes the rate allows
// during the last write if that took longer, between 1 and
// maxNodeDownBatch.
func (h *Heartbeater) batchLimit(lastWrite time.Duration) int {
	window := max(time.Second, lastWrite)
	n := math.Floor(h.cfg.MaxNodeDownPerSecond * window.Seconds())
	return int(min(max(n, 1), maxNodeDownBatch))
}

// gatherExpiries is first and whatever else is queued, up to limit
// expiries, one per node (the newest, if a node was queued twice: it
// heartbeated and expired again), sorted by node ID: the order their
// locks are taken in.
func (h *Heartbeater) gatherExpiries(first expiry, limit int) []expiry {
	byNode := map[string]expiry{first.nodeID: first}
queued:
	for taken := 1; taken < limit; taken++ {
		select {
		case e := <-h.expired:
			byNode[e.nodeID] = e
		default:
			break queued
		}
	}
	batch := make([]expiry, 0, len(byNode))
	for _, e := range byNode {
		batch = append(batch, e)
	}
	sort.Slice(batch, func(i, j int) bool { return batch[i].nodeID < batch[j].nodeID })
	return batch
}

// invalidateBatch decides each expiry of the batch under its node's lock,
// commits the status changes in one raft entry, and releases the locks
// once it has applied: a heartbeat of a batched node waits for the commit
// and then finds the node down (and writes it ready again), as it would
// for a single invalidation. It returns how many nodes it marked.
func (h *Heartbeater) invalidateBatch(batch []expiry) int {
	start := time.Now()
	req := &structs.NodeBatchUpdateStatusRequest{NodeModifyIndexes: make(map[string]uint64, len(batch))}
	var unlocks []func()
	defer func() {
		for _, unlock := range unlocks {
			unlock()
		}
	}()
	for _, e := range batch {
		unlock := h.LockNode(e.nodeID)
		update, modifyIndex := h.decideInvalidation(e)
		if update == nil {
			unlock()
			continue
		}
		unlocks = append(unlocks, unlock)
		req.Updates = append(req.Updates, update)
		req.NodeModifyIndexes[update.NodeID] = modifyIndex
	}
	if len(req.Updates) == 0 {
		return 0
	}
	marked := 0
	for _, updates := range chunkByEvals(req.Updates, maxNodeDownEntryEvals) {
		marked += h.commitNodeDown(&structs.NodeBatchUpdateStatusRequest{Updates: updates, NodeModifyIndexes: req.NodeModifyIndexes})
	}
	h.cfg.Metrics.MeasureSince(keyInvalidate, start)
	return marked
}

// commitNodeDown commits one entry of decided status changes and returns
// how many nodes it marked. The caller holds the nodes' locks.
func (h *Heartbeater) commitNodeDown(req *structs.NodeBatchUpdateStatusRequest) int {
	skipped, err := h.cfg.Writer.ApplyNodeStatuses(req)
	if err != nil {
		h.logger.Error("marking nodes after missed heartbeats", "nodes", len(req.Updates), "error", err)
		for _, u := range req.Updates {
			h.arm(u.NodeID, invalidateRetry) // a no-op once leadership is gone
		}
		return 0
	}
	skip := make(map[string]bool, len(skipped))
	for _, id := range skipped {
		skip[id] = true
		// It changed after it was read: look again soon.
		h.arm(id, invalidateRetry)
	}
	marked := 0
	for _, u := range req.Updates {
		if skip[u.NodeID] {
			continue
		}
		marked++
		h.logger.Warn("node missed its heartbeat", "node", u.NodeID, "status", u.Status, "evals", len(u.Evals), "batch", len(req.Updates))
		if u.Status == structs.NodeStatusDisconnected {
			h.ArmDisconnected(u.NodeID)
		}
	}
	return marked
}

// chunkByEvals splits updates, in order, into runs of at most maxEvals
// evals each; an update with more than that on its own gets a run of its
// own.
func chunkByEvals(updates []*structs.NodeUpdateStatusRequest, maxEvals int) [][]*structs.NodeUpdateStatusRequest {
	var out [][]*structs.NodeUpdateStatusRequest
	var cur []*structs.NodeUpdateStatusRequest
	evals := 0
	for _, u := range updates {
		if len(cur) > 0 && evals+len(u.Evals) > maxEvals {
			out = append(out, cur)
			cur, evals = nil, 0
		}
		cur = append(cur, u)
		evals += len(u.Evals)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
