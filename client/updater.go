package client

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/drover-sched/drover/client/allocsync"
	"github.com/drover-sched/drover/structs"
)

// updater batches alloc status changes into Node.UpdateAlloc calls, one
// every UpdateInterval at most. The newest state per alloc wins: a change
// replaces any pending one for the same alloc.
//
// A batch the servers refuse (the node is not ready: it must heartbeat
// first) or that does not get through is never dropped: it is merged back
// under any newer changes and held until the next successful heartbeat.
//
// Ownership: run is the updater's goroutine; pending is guarded by mu
// because alloc runners add to it from theirs.
type updater struct {
	c       *Client
	mu      sync.Mutex
	pending map[string]*structs.Allocation
	kick    chan struct{}
}

func newUpdater(c *Client) *updater {
	return &updater{c: c, pending: map[string]*structs.Allocation{}, kick: make(chan struct{}, 1)}
}

// add queues an alloc's client fields. Called from alloc runners.
func (u *updater) add(a *structs.Allocation) {
	u.mu.Lock()
	u.pending[a.ID] = a
	u.mu.Unlock()
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// Pending returns how many allocs have unsent updates.
func (u *updater) Pending() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.pending)
}

func (u *updater) take() []*structs.Allocation {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]*structs.Allocation, 0, len(u.pending))
	for _, a := range u.pending {
		out = append(out, a)
	}
	u.pending = map[string]*structs.Allocation{}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// putBack returns a failed batch, except where a newer change arrived.
func (u *updater) putBack(batch []*structs.Allocation) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, a := range batch {
		if _, newer := u.pending[a.ID]; !newer {
			u.pending[a.ID] = a
		}
	}
}

func (u *updater) run() {
	c := u.c
	for {
		select {
		case <-c.ctx.Done():
			u.flush()
			return
		case <-u.kick:
		}
		// Let changes accumulate for one interval.
		select {
		case <-c.ctx.Done():
			u.flush()
			return
		case <-c.clock.After(c.cfg.UpdateInterval):
		}
		hb := c.nextHeartbeat()
		if err := u.send(c.ctx); err != nil {
			c.logger.Warn("alloc updates refused; holding them until the next heartbeat", "error", err)
			select {
			case <-c.ctx.Done():
				return
			case <-hb:
			}
			// Retry straight away.
			select {
			case u.kick <- struct{}{}:
			default:
			}
		}
	}
}

// send sends everything pending; on failure the batch goes back.
func (u *updater) send(ctx context.Context) error {
	batch := u.take()
	if len(batch) == 0 {
		return nil
	}
	err := u.call(ctx, batch)
	if err == nil {
		return nil
	}
	if !allocsync.RefusedOnMerit(err) {
		u.putBack(batch)
		return err
	}
	// The servers judged the batch and refused it (an update they find
	// invalid). Resending it as is would be refused forever and hold every
	// other alloc's report hostage, so send each alone and give up only on
	// those refused on their own merits.
	var held []*structs.Allocation
	var last error
	for _, a := range batch {
		err := u.call(ctx, []*structs.Allocation{a})
		switch {
		case err == nil:
		case allocsync.RefusedOnMerit(err):
			u.c.logger.Error("servers refused an alloc update; dropping it", "alloc_id", a.ID, "client_status", a.ClientStatus, "error", err)
		default:
			held = append(held, a)
			last = err
		}
	}
	if len(held) > 0 {
		u.putBack(held)
		return last
	}
	return nil
}

func (u *updater) call(ctx context.Context, batch []*structs.Allocation) error {
	nodeID, secretID := u.c.identity()
	req := &structs.AllocUpdateRequest{Alloc: batch, NodeID: nodeID, SecretID: secretID, WriteRequest: structs.WriteRequest{Region: u.c.cfg.Region}}
	var resp structs.GenericResponse
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return u.c.rpc.RPC(ctx, "Node.UpdateAlloc", req, &resp)
}

// flush makes one last attempt at shutdown, briefly.
func (u *updater) flush() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = u.send(ctx)
}
