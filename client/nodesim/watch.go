package nodesim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/structs"
)

// watch is the node's one goroutine, as the real client's watchAllocs:
// it registers for the alloc notices the servers push (Node.WatchAllocs),
// waits for one, reads the assignment with a non-blocking
// Node.GetClientAllocs and registers again; it registers again too when
// the registration's session closes and every lease. Against servers
// without notices it holds the blocking Node.GetClientAllocs instead, and
// tries notices again once per BlockingQueryWait. It owns its
// watchState.
func (n *node) watch() {
	s := n.sim
	defer s.wg.Done()
	select {
	case <-n.registeredCh:
	case <-s.ctx.Done():
		return
	}
	w := &watchState{known: map[string]uint64{}, first: true}
	push := n.notices != nil
	var fallbackSince time.Time
	needFetch := true
	failures := 0
	for s.ctx.Err() == nil {
		n.mu.Lock()
		if n.down {
			ch := n.resumeCh
			n.mu.Unlock()
			select {
			case <-ch:
			case <-s.ctx.Done():
				return
			}
			continue
		}
		wctx, cancel := context.WithCancel(s.ctx)
		n.watchCancel = cancel
		n.mu.Unlock()

		var err error
		switch {
		case !push:
			err = n.pollOnce(wctx, w, true)
			if err == nil && n.notices != nil && time.Since(fallbackSince) >= s.cfg.BlockingQueryWait {
				push, needFetch = true, false
			}
		case needFetch:
			if err = n.pollOnce(wctx, w, false); err == nil {
				needFetch = false
			}
		default:
			needFetch, err = n.awaitNotice(wctx, w.index)
			if errors.Is(err, allocsync.ErrNoticesUnsupported) {
				push, fallbackSince, err = false, time.Now(), nil
			}
		}
		cancel()
		if err == nil {
			failures = 0
			continue
		}
		if s.ctx.Err() != nil {
			return
		}
		if wctx.Err() != nil {
			continue // cut off: the loop waits for the outage to end
		}
		n.mu.Lock()
		wait := backoff(n.rnd, failures, backoffBase, s.cfg.MaxBackoff)
		n.mu.Unlock()
		failures++
		s.log.Warn("nodesim: failed to read allocs", "node", n.tmpl.Name, "error", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.ctx.Done():
			t.Stop()
			return
		}
	}
}

// watchState is what the node has applied: index (of the last applied
// answer), known (the AllocModifyIndex applied per alloc), and first,
// set until an answer was applied.
type watchState struct {
	index uint64
	known map[string]uint64
	first bool
}

// pollOnce reads the assignment, blocking until it passes w.index when
// block is set, and applies it if it is newer (or the first).
func (n *node) pollOnce(ctx context.Context, w *watchState, block bool) error {
	s := n.sim
	req := &structs.NodeSpecificRequest{NodeID: n.id, SecretID: n.secret, QueryOptions: structs.QueryOptions{
		Region: s.cfg.Region, MaxQueryTime: s.cfg.BlockingQueryWait, AllowStale: true}}
	var resp structs.NodeClientAllocsResponse
	if block {
		// The blocking query is outside the call budget: every node
		// holds one all the time, as real nodes do.
		req.MinQueryIndex = w.index
		if err := n.sh.rpc.RPC(ctx, "Node.GetClientAllocs", req, &resp); err != nil {
			return err
		}
	} else if err := s.call(ctx, n.sh, callTimeout, "Node.GetClientAllocs", req, &resp); err != nil {
		return err
	}
	s.stats.AllocPolls.Add(1)
	if resp.Index < w.index {
		return fmt.Errorf("stale answer: index %d is older than applied index %d", resp.Index, w.index)
	}
	if resp.Index == w.index && !w.first {
		return nil
	}
	assigned := resp.Allocs
	if assigned == nil {
		assigned = map[string]uint64{}
	}
	fetched, err := n.fetchChanged(ctx, assigned, resp.Index, w.known)
	if err != nil {
		return err
	}
	n.apply(assigned, resp.Index, fetched, w.known)
	w.index, w.first = resp.Index, false
	return nil
}

// awaitNotice registers for a notice past index and waits for one, for
// the registration's session to close, for the shard's calls to move to
// another server, or for the lease to run out, as the real client's
// awaitAllocNotice. It reports whether the assignment
// must be read before registering again.
func (n *node) awaitNotice(ctx context.Context, index uint64) (bool, error) {
	s := n.sim
	call := func(ctx context.Context, method string, args, reply any) error {
		return s.call(ctx, n.sh, callTimeout, method, args, reply)
	}
	q := allocsync.Query{NodeID: n.id, SecretID: n.secret, Region: s.cfg.Region}
	moved := n.sh.rpc.Moved() // before registering: a move meanwhile counts
	current, closed, err := allocsync.Register(ctx, call, q, index)
	if err != nil {
		return false, err
	}
	s.stats.NoticeRegistrations.Add(1)
	if current > index {
		return true, nil
	}
	n.mu.Lock()
	wait := s.cfg.BlockingQueryWait + time.Duration(n.rnd.Int64N(int64(s.cfg.BlockingQueryWait/16)+1))
	n.mu.Unlock()
	lease := time.NewTimer(wait)
	defer lease.Stop()
	select {
	case <-n.notices.Ready():
		s.stats.AllocNotices.Add(1)
		return n.notices.Take() > index, nil
	case <-closed:
		return false, nil
	case <-moved:
		return false, nil
	case <-lease.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// fetchChanged reads the allocs whose AllocModifyIndex moved, as the real
// client does (allocsync.FetchChanged), counting each page read.
func (n *node) fetchChanged(ctx context.Context, assigned map[string]uint64, index uint64, known map[string]uint64) ([]*structs.Allocation, error) {
	s := n.sim
	call := func(ctx context.Context, method string, args, reply any) error {
		if err := s.call(ctx, n.sh, callTimeout, method, args, reply); err != nil {
			return err
		}
		s.stats.AllocFetches.Add(1)
		return nil
	}
	q := allocsync.Query{NodeID: n.id, SecretID: n.secret, Region: s.cfg.Region, Wait: s.cfg.BlockingQueryWait}
	return allocsync.FetchChanged(ctx, call, q, assigned, index, known)
}

// apply makes the node's simulated allocs match the assignment at index.
func (n *node) apply(assigned map[string]uint64, index uint64, fetched []*structs.Allocation, known map[string]uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for id, a := range n.allocs {
		if _, ok := assigned[id]; ok || a.createIndex > index {
			continue
		}
		// No longer assigned: the servers collected it.
		a.stopTimers()
		delete(n.allocs, id)
	}
	for id := range known {
		if _, ok := assigned[id]; !ok && n.allocs[id] == nil {
			delete(known, id)
		}
	}
	for _, a := range fetched {
		known[a.ID] = a.AllocModifyIndex
		if sa := n.allocs[a.ID]; sa != nil {
			sa.update(a)
			continue
		}
		if a.ServerTerminalStatus() || a.ClientTerminalStatus() {
			continue
		}
		n.allocs[a.ID] = n.startAlloc(a)
	}
}
