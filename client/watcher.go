package client

import (
	"errors"
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/structs"
)

// watchAllocs keeps the node's assignment: Node.GetClientAllocs says
// which allocs the node has and each one's AllocModifyIndex; those whose
// index moved are fetched with Alloc.GetAllocs and applied.
//
// It learns of changes from notices the servers push (allocsync's
// Mailbox; see the doc there): it registers with Node.WatchAllocs, waits
// for a notice, reads the assignment with a non-blocking query and
// registers again. It registers again too when the session it registered
// over closes, when its calls move to another server (the one it
// registered on may have lost touch with the leader while its session
// stays open), and every lease (BlockingQueryWait plus jitter), so a lost
// notice leaves the node stale for one lease at most. Against servers
// that do not know Node.WatchAllocs, or when the client's calls do not go
// over its own pool, it holds a blocking Node.GetClientAllocs instead, as
// before notices, and tries notices again once per BlockingQueryWait.
//
// State owned by this goroutine: the assignmentState.
func (c *Client) watchAllocs() {
	select {
	case <-c.registeredCh:
	case <-c.ctx.Done():
		return
	}
	w := &assignmentState{known: map[string]uint64{}, first: true}
	c.allocMu.RLock()
	for id, ar := range c.allocs {
		w.known[id] = ar.Alloc().AllocModifyIndex
	}
	c.allocMu.RUnlock()
	push := c.allocNotices != nil
	var fallbackSince time.Time
	needFetch := true
	failures := 0
	for {
		var err error
		switch {
		case !push:
			err = c.syncAssignment(w, true)
			if err == nil && c.allocNotices != nil && c.clock.Now().Sub(fallbackSince) >= c.cfg.BlockingQueryWait {
				push, needFetch = true, false
			}
		case needFetch:
			if err = c.syncAssignment(w, false); err == nil {
				needFetch = false
			}
		default:
			needFetch, err = c.awaitAllocNotice(w.index)
			if errors.Is(err, allocsync.ErrNoticesUnsupported) {
				c.logger.Info("servers do not push alloc notices; watching allocs with blocking queries")
				push, fallbackSince, err = false, c.clock.Now(), nil
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

// assignmentState is what the watch loop has applied: index (of the last
// applied answer) and known (the AllocModifyIndex applied per alloc ID,
// including allocs the client does not run because they were already
// terminal). first is set until an answer was applied.
type assignmentState struct {
	index uint64
	known map[string]uint64
	first bool
}

// syncAssignment reads the assignment, blocking until it passes w.index
// when block is set, and applies it if it is newer than w's (or the first).
func (c *Client) syncAssignment(w *assignmentState, block bool) error {
	var minIndex uint64
	if block {
		minIndex = w.index
	}
	assigned, respIndex, err := c.getAssignment(minIndex)
	if err != nil {
		return err
	}
	if respIndex < w.index {
		return fmt.Errorf("stale answer: index %d is older than applied index %d", respIndex, w.index)
	}
	if respIndex == w.index && !w.first {
		return nil
	}
	fetched, err := c.fetchChanged(assigned, respIndex, w.known)
	if err != nil {
		return err
	}
	c.applyAssignment(assigned, respIndex, fetched, w.known)
	w.index, w.first = respIndex, false
	return nil
}

// awaitAllocNotice registers for a notice past index and waits for one,
// for the registration's session to close, or for the lease to run out.
// It reports whether the assignment must be read before registering
// again: the server or a notice knows of an index past the applied one.
func (c *Client) awaitAllocNotice(index uint64) (bool, error) {
	nodeID, secretID := c.identity()
	q := allocsync.Query{NodeID: nodeID, SecretID: secretID, Region: c.cfg.Region}
	// Taken before registering, so that a move while the call is out
	// counts too.
	var moved <-chan struct{}
	if c.srv != nil {
		moved = c.srv.Moved()
	}
	current, closed, err := allocsync.Register(c.ctx, c.rpc.RPC, q, index)
	if err != nil {
		return false, err
	}
	if current > index {
		return true, nil
	}
	lease := c.clock.After(c.jit.lease(c.cfg.BlockingQueryWait))
	select {
	case <-c.allocNotices.Ready():
		return c.allocNotices.Take() > index, nil
	case <-closed:
		// The server can no longer reach us there: register again (over
		// a new session), whose answer says if anything changed.
		return false, nil
	case <-moved:
		// Calls go to another server now, most likely because this one
		// failed one or lost touch with the leader: its session may stay
		// open while it learns of no change. Register where calls go.
		return false, nil
	case <-lease:
		return false, nil
	case <-c.ctx.Done():
		return false, c.ctx.Err()
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
