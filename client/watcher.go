package client

import (
	"fmt"

	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/structs"
)

// watchAllocs keeps the node's assignment: a blocking Node.GetClientAllocs
// says which allocs the node has and each one's AllocModifyIndex; those
// whose index moved are fetched with Alloc.GetAllocs and applied.
//
// State owned by this goroutine: index (of the last applied answer) and
// known (the AllocModifyIndex applied per alloc ID, including allocs the
// client does not run because they were already terminal).
func (c *Client) watchAllocs() {
	select {
	case <-c.registeredCh:
	case <-c.ctx.Done():
		return
	}
	var index uint64
	known := map[string]uint64{}
	c.allocMu.RLock()
	for id, ar := range c.allocs {
		known[id] = ar.Alloc().AllocModifyIndex
	}
	c.allocMu.RUnlock()
	first := true
	failures := 0
	for {
		assigned, respIndex, err := c.getAssignment(index)
		if err == nil && respIndex < index {
			err = fmt.Errorf("stale answer: index %d is older than applied index %d", respIndex, index)
		}
		var fetched []*structs.Allocation
		if err == nil && (respIndex > index || first) {
			fetched, err = c.fetchChanged(assigned, respIndex, known)
			if err == nil {
				c.applyAssignment(assigned, respIndex, fetched, known)
				index, first = respIndex, false
			}
		}
		if err != nil {
			if c.ctx.Err() != nil {
				return
			}
			wait := c.jit.backoff(failures, backoffBase, c.cfg.MaxBackoff)
			failures++
			c.logger.Warn("failed to read allocs", "error", err, "retry_in", wait)
			select {
			case <-c.ctx.Done():
				return
			case <-c.clock.After(wait):
			}
			continue
		}
		failures = 0
		if c.ctx.Err() != nil {
			return
		}
	}
}

func (c *Client) getAssignment(minIndex uint64) (map[string]uint64, uint64, error) {
	nodeID, secretID := c.identity()
	req := &structs.NodeSpecificRequest{NodeID: nodeID, SecretID: secretID, QueryOptions: structs.QueryOptions{
		Region: c.cfg.Region, MinQueryIndex: minIndex, MaxQueryTime: c.cfg.BlockingQueryWait, AllowStale: true}}
	var resp structs.NodeClientAllocsResponse
	if err := c.rpc.RPC(c.ctx, "Node.GetClientAllocs", req, &resp); err != nil {
		return nil, 0, err
	}
	if resp.Allocs == nil {
		resp.Allocs = map[string]uint64{}
	}
	return resp.Allocs, resp.Index, nil
}

// fetchChanged reads the allocs whose AllocModifyIndex moved past what was
// applied (allocsync.FetchChanged: at least as new as the assignment,
// following the servers' pages).
func (c *Client) fetchChanged(assigned map[string]uint64, index uint64, known map[string]uint64) ([]*structs.Allocation, error) {
	nodeID, secretID := c.identity()
	q := allocsync.Query{NodeID: nodeID, SecretID: secretID, Region: c.cfg.Region, Wait: c.cfg.BlockingQueryWait}
	return allocsync.FetchChanged(c.ctx, c.rpc.RPC, q, assigned, index, known)
}

// applyAssignment makes the client's runners match the assignment at index.
func (c *Client) applyAssignment(assigned map[string]uint64, index uint64, fetched []*structs.Allocation, known map[string]uint64) {
	byID := make(map[string]*structs.Allocation, len(fetched))
	for _, a := range fetched {
		byID[a.ID] = a
	}
	var unassigned []string
	c.allocMu.RLock()
	runners := make(map[string]bool, len(c.allocs))
	for id, ar := range c.allocs {
		runners[id] = true
		if _, ok := assigned[id]; ok {
			if _, changed := byID[id]; !changed {
				// Listed, unchanged since what the runner has: the servers
				// still want what it runs (a restored runner may start).
				ar.Confirm()
			}
			continue
		}
		// Not assigned. Only an answer that reflects the alloc's creation
		// can say it was removed; a stale one simply does not know it yet.
		if a := ar.Alloc(); a.CreateIndex > index {
			continue
		}
		unassigned = append(unassigned, id)
		if !ar.IsTerminal() {
			c.logger.Info("stopping alloc no longer assigned to this node", "alloc_id", id)
		}
		ar.Kill("alloc is no longer assigned to this node")
	}
	c.allocMu.RUnlock()
	c.collectUnassigned(unassigned)

	for id := range known {
		if _, ok := assigned[id]; !ok && !runners[id] {
			delete(known, id)
		}
	}
	added := false
	for _, a := range fetched {
		known[a.ID] = a.AllocModifyIndex
		if ar := c.runner(a.ID); ar != nil {
			ar.Update(a)
			continue
		}
		if a.ServerTerminalStatus() || a.ClientTerminalStatus() {
			// Nothing to run: stopped before it reached us, or finished
			// in an earlier life of this client whose state is gone.
			continue
		}
		c.logger.Info("starting alloc", "alloc_id", a.ID, "job", a.JobID, "group", a.TaskGroup)
		c.newRunner(a, false)
		added = true
	}
	if added {
		c.gc.Trigger()
	}
	if len(fetched) > 0 {
		// A desired stop deregisters the alloc's services before its
		// tasks are killed, as in Nomad.
		c.services.Kick()
	}
}

// collectUnassigned removes the directories of allocs the servers no
// longer assign to this node. The servers drop an alloc only once it is
// terminal on both sides and collected (a stale answer was filtered out
// above), so nothing will ask for it again: its directory goes now rather
// than when the local GC's count, age or disk limits reach it. A runner
// still stopping is destroyed when it is done (see newRunner).
func (c *Client) collectUnassigned(ids []string) {
	if len(ids) == 0 {
		return
	}
	c.allocMu.Lock()
	if c.unassigned == nil {
		c.unassigned = map[string]bool{}
	}
	for _, id := range ids {
		c.unassigned[id] = true
	}
	c.allocMu.Unlock()
	for _, id := range ids {
		c.gc.Destroy(id, "collected by the servers")
	}
}
