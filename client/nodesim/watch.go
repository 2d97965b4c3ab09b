package nodesim

import (
	"context"
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/structs"
)

// watch is the node's one goroutine: the blocking Node.GetClientAllocs
// query, as the real client's watchAllocs. It owns index and known.
func (n *node) watch() {
	s := n.sim
	defer s.wg.Done()
	select {
	case <-n.registeredCh:
	case <-s.ctx.Done():
		return
	}
	var index uint64
	known := map[string]uint64{}
	first := true
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

		err := n.pollOnce(wctx, &index, known, &first)
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

func (n *node) pollOnce(ctx context.Context, index *uint64, known map[string]uint64, first *bool) error {
	s := n.sim
	req := &structs.NodeSpecificRequest{NodeID: n.id, SecretID: n.secret, QueryOptions: structs.QueryOptions{
		Region: s.cfg.Region, MinQueryIndex: *index, MaxQueryTime: s.cfg.BlockingQueryWait, AllowStale: true}}
	var resp structs.NodeClientAllocsResponse
	// The blocking query is outside the call budget: every node holds
	// one all the time, as real nodes do.
	if err := n.sh.rpc.RPC(ctx, "Node.GetClientAllocs", req, &resp); err != nil {
		return err
	}
	s.stats.AllocPolls.Add(1)
	if resp.Index < *index {
		return fmt.Errorf("stale answer: index %d is older than applied index %d", resp.Index, *index)
	}
	if resp.Index == *index && !*first {
		return nil
	}
	assigned := resp.Allocs
	if assigned == nil {
		assigned = map[string]uint64{}
	}
	fetched, err := n.fetchChanged(ctx, assigned, resp.Index, known)
	if err != nil {
		return err
	}
	n.apply(assigned, resp.Index, fetched, known)
	*index, *first = resp.Index, false
	return nil
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
