package nodesim

import (
	"sort"
	"time"

	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/structs"
)

// armFlush schedules the node's next Node.UpdateAlloc batch, one per
// UpdateInterval at most, as the real client's updater. Caller holds n.mu.
func (n *node) armFlush(d time.Duration) {
	if n.flushTimer != nil || n.held {
		return
	}
	n.flushTimer = time.AfterFunc(d, n.flush)
}

func (n *node) flushSoon(d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.armFlush(d)
}

// flush sends everything pending. A batch that does not get through, or
// that the servers refuse because of the node's state (not ready: it must
// heartbeat first), goes back under newer changes and waits for the next
// successful heartbeat. One refused on its merits is resent alloc by
// alloc, and only the allocs refused on their own are dropped.
func (n *node) flush() {
	s := n.sim
	n.mu.Lock()
	n.flushTimer = nil
	if n.down || len(n.pending) == 0 || s.ctx.Err() != nil {
		n.held = n.held || len(n.pending) > 0
		n.mu.Unlock()
		return
	}
	batch := make([]*structs.Allocation, 0, len(n.pending))
	for _, a := range n.pending {
		batch = append(batch, a)
	}
	n.pending = map[string]*structs.Allocation{}
	n.mu.Unlock()
	sort.Slice(batch, func(i, j int) bool { return batch[i].ID < batch[j].ID })

	err := n.send(batch)
	if err != nil && allocsync.RefusedOnMerit(err) {
		var held []*structs.Allocation
		for _, a := range batch {
			switch e := n.send([]*structs.Allocation{a}); {
			case e == nil:
			case allocsync.RefusedOnMerit(e):
				s.stats.UpdatesRefused.Add(1)
				s.log.Warn("nodesim: servers refused an alloc update; dropping it", "alloc_id", a.ID, "error", e)
			default:
				held = append(held, a)
				err = e
			}
		}
		batch = held
		if len(held) == 0 {
			err = nil
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err == nil {
		if len(n.pending) > 0 {
			n.armFlush(s.cfg.UpdateInterval)
		}
		return
	}
	for _, a := range batch {
		if _, newer := n.pending[a.ID]; !newer {
			n.pending[a.ID] = a
		}
	}
	n.held = true
	s.log.Warn("nodesim: alloc updates refused; holding them until the next heartbeat", "node", n.tmpl.Name, "error", err)
}

func (n *node) send(batch []*structs.Allocation) error {
	s := n.sim
	req := &structs.AllocUpdateRequest{Alloc: batch, NodeID: n.id, SecretID: n.secret, WriteRequest: structs.WriteRequest{Region: s.cfg.Region}}
	var resp structs.GenericResponse
	err := s.call(s.ctx, n.sh, callTimeout, "Node.UpdateAlloc", req, &resp)
	if err == nil {
		s.stats.UpdateCalls.Add(1)
	}
	return err
}
