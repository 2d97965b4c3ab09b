package clienttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// ErrNetwork is what a "down" fake returns: not a remote error, so the
// client treats it as a transport failure.
var ErrNetwork = errors.New("fake: connection refused")

// FakeServer implements the client's RPCer.
type FakeServer struct {
	mu       sync.Mutex
	index    uint64
	ttl      time.Duration
	nodes    map[string]*structs.Node
	allocs   map[string]*structs.Allocation
	updates  []*structs.Allocation
	calls    map[string]int
	down     bool
	notReady bool
	canned   []*structs.NodeClientAllocsResponse
	reject   map[string]bool
	changed  chan struct{}
}

// NewFakeServer returns a fake with a heartbeat TTL of ttl.
func NewFakeServer(ttl time.Duration) *FakeServer {
	if ttl <= 0 {
		ttl = 10 * time.Second
	}
	return &FakeServer{index: 1, ttl: ttl, nodes: map[string]*structs.Node{}, allocs: map[string]*structs.Allocation{},
		calls: map[string]int{}, reject: map[string]bool{}, changed: make(chan struct{})}
}

func (f *FakeServer) bumpLocked() uint64 {
	f.index++
	close(f.changed)
	f.changed = make(chan struct{})
	return f.index
}

// SetDown makes every call fail with ErrNetwork (a partition) or work again.
func (f *FakeServer) SetDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.bumpLocked() // wake blocked queries so they see the change
	f.mu.Unlock()
}

// SetNotReady makes Node.UpdateAlloc fail with structs.ErrNodeNotReady
// until the next successful heartbeat (as the real server does for a node
// that is down or disconnected), or forever while held.
func (f *FakeServer) SetNotReady(v bool) {
	f.mu.Lock()
	f.notReady = v
	f.mu.Unlock()
}

// ForgetNodes makes the server lose its nodes: the next heartbeat gets "not
// found" and the client must register again.
func (f *FakeServer) ForgetNodes() {
	f.mu.Lock()
	f.nodes = map[string]*structs.Node{}
	f.mu.Unlock()
}

// QueueClientAllocs makes the next Node.GetClientAllocs answer resp at
// once, as a stale follower would.
func (f *FakeServer) QueueClientAllocs(resp *structs.NodeClientAllocsResponse) {
	f.mu.Lock()
	f.canned = append(f.canned, resp)
	f.bumpLocked()
	f.mu.Unlock()
}

// UpsertAlloc adds or changes an allocation the way a plan would: its
// AllocModifyIndex moves to a new index. It returns the stored copy.
func (f *FakeServer) UpsertAlloc(a *structs.Allocation) *structs.Allocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	a = a.Copy()
	idx := f.bumpLocked()
	if old, ok := f.allocs[a.ID]; ok {
		a.CreateIndex = old.CreateIndex
		if a.ClientStatus == "" {
			a.ClientStatus = old.ClientStatus
			a.TaskStates = old.TaskStates
		}
	} else {
		a.CreateIndex = idx
	}
	if a.ClientStatus == "" {
		a.ClientStatus = structs.AllocClientStatusPending
	}
	if a.DesiredStatus == "" {
		a.DesiredStatus = structs.AllocDesiredStatusRun
	}
	a.ModifyIndex, a.AllocModifyIndex = idx, idx
	f.allocs[a.ID] = a
	return a.Copy()
}

// StopAlloc sets an alloc's desired status to stop.
func (f *FakeServer) StopAlloc(id string) {
	a := f.Alloc(id)
	a.DesiredStatus = structs.AllocDesiredStatusStop
	f.UpsertAlloc(a)
}

// RemoveAlloc deletes an alloc from the node's assignment (server GC).
func (f *FakeServer) RemoveAlloc(id string) {
	f.mu.Lock()
	delete(f.allocs, id)
	f.bumpLocked()
	f.mu.Unlock()
}

// Alloc returns a copy of the server's alloc, or nil.
func (f *FakeServer) Alloc(id string) *structs.Allocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.allocs[id].Copy()
}

// Updates returns every alloc update the client sent, in order.
func (f *FakeServer) Updates() []*structs.Allocation {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*structs.Allocation(nil), f.updates...)
}

// Calls returns how many times method was called.
func (f *FakeServer) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

// Node returns the registered node, or nil.
func (f *FakeServer) Node(id string) *structs.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nodes[id].Copy()
}

// Index returns the current index.
func (f *FakeServer) Index() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.index
}

// RPC dispatches a call.
func (f *FakeServer) RPC(ctx context.Context, method string, args, reply any) error {
	f.mu.Lock()
	f.calls[method]++
	down := f.down
	f.mu.Unlock()
	if down {
		return ErrNetwork
	}
	err := f.dispatch(ctx, method, args, reply)
	if err == nil || errors.Is(err, ErrNetwork) || ctx.Err() != nil {
		return err
	}
	// A handler's error reaches a real client as an rpcx.RemoteError
	// carrying its text and its sentinel's code; so does the fake's.
	return rpcx.NewRemoteError(err)
}

func (f *FakeServer) dispatch(ctx context.Context, method string, args, reply any) error {
	switch method {
	case "Node.Register":
		return f.register(args.(*structs.NodeRegisterRequest), reply.(*structs.NodeUpdateResponse))
	case "Node.UpdateStatus":
		return f.updateStatus(args.(*structs.NodeUpdateStatusRequest), reply.(*structs.NodeUpdateResponse))
	case "Node.GetClientAllocs":
		return f.getClientAllocs(ctx, args.(*structs.NodeSpecificRequest), reply.(*structs.NodeClientAllocsResponse))
	case "Alloc.GetAllocs":
		return f.getAllocs(args.(*structs.AllocsGetRequest), reply.(*structs.AllocsGetResponse))
	case "Node.UpdateAlloc":
		return f.updateAlloc(args.(*structs.AllocUpdateRequest), reply.(*structs.GenericResponse))
	}
	return fmt.Errorf("rpc: can't find method %s", method)
}

// RejectUpdatesFor makes Node.UpdateAlloc refuse any batch that contains
// the alloc, as the real server refuses a batch with an invalid update.
func (f *FakeServer) RejectUpdatesFor(id string) {
	f.mu.Lock()
	f.reject[id] = true
	f.mu.Unlock()
}

// authLocked checks a call a node makes for itself the way the real
// server does: the node must exist (else "not found", and the client
// registers again) and the call must carry its secret. f.mu is held.
func (f *FakeServer) authLocked(nodeID, secretID string) (*structs.Node, error) {
	if nodeID == "" {
		return nil, errors.New("bad request: node ID is missing")
	}
	n, ok := f.nodes[nodeID]
	if !ok {
		return nil, fmt.Errorf("node %s: %w", nodeID, structs.ErrNotFound)
	}
	return n, n.CheckSecret(secretID)
}

func (f *FakeServer) register(req *structs.NodeRegisterRequest, resp *structs.NodeUpdateResponse) error {
	if err := req.Node.Validate(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.nodes[req.Node.ID]; ok {
		if err := old.CheckSecret(req.Node.SecretID); err != nil {
			return err
		}
	}
	n := req.Node.Copy()
	n.Status = structs.NodeStatusReady
	f.nodes[n.ID] = n
	f.notReady = false
	resp.HeartbeatTTL = f.ttl
	resp.Index = f.bumpLocked()
	return nil
}

func (f *FakeServer) updateStatus(req *structs.NodeUpdateStatusRequest, resp *structs.NodeUpdateResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, err := f.authLocked(req.NodeID, req.SecretID)
	if err != nil {
		return err
	}
	n.Status = req.Status
	f.notReady = false
	resp.HeartbeatTTL = f.ttl
	resp.Index = f.index
	return nil
}

func (f *FakeServer) getClientAllocs(ctx context.Context, req *structs.NodeSpecificRequest, resp *structs.NodeClientAllocsResponse) error {
	var timeout <-chan time.Time
	if req.MaxQueryTime > 0 {
		t := time.NewTimer(req.MaxQueryTime)
		defer t.Stop()
		timeout = t.C
	}
	for {
		f.mu.Lock()
		if f.down {
			f.mu.Unlock()
			return ErrNetwork
		}
		if _, err := f.authLocked(req.NodeID, req.SecretID); err != nil {
			f.mu.Unlock()
			return err
		}
		if len(f.canned) > 0 {
			c := f.canned[0]
			f.canned = f.canned[1:]
			f.mu.Unlock()
			*resp = *c
			return nil
		}
		if f.index > req.MinQueryIndex {
			f.answerAllocsLocked(req.NodeID, resp)
			f.mu.Unlock()
			return nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-timeout:
			f.mu.Lock()
			f.answerAllocsLocked(req.NodeID, resp)
			f.mu.Unlock()
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// answerAllocsLocked fills resp with the node's allocs and the current
// index.
func (f *FakeServer) answerAllocsLocked(nodeID string, resp *structs.NodeClientAllocsResponse) {
	resp.Allocs = map[string]uint64{}
	for id, a := range f.allocs {
		if a.NodeID == nodeID {
			resp.Allocs[id] = a.AllocModifyIndex
		}
	}
	resp.Index = f.index
}

func (f *FakeServer) getAllocs(req *structs.AllocsGetRequest, resp *structs.AllocsGetResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	asNode := req.NodeID != "" || req.SecretID != ""
	if asNode {
		if _, err := f.authLocked(req.NodeID, req.SecretID); err != nil {
			return err
		}
	}
	for _, id := range req.AllocIDs {
		if a, ok := f.allocs[id]; ok && (!asNode || a.NodeID == req.NodeID) {
			resp.Allocs = append(resp.Allocs, a.Copy())
		}
	}
	resp.Index = f.index
	return nil
}

func (f *FakeServer) updateAlloc(req *structs.AllocUpdateRequest, resp *structs.GenericResponse) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.authLocked(req.NodeID, req.SecretID); err != nil {
		return err
	}
	if f.notReady {
		return fmt.Errorf("node update rejected: %w", structs.ErrNodeNotReady)
	}
	for _, u := range req.Alloc {
		if a, ok := f.allocs[u.ID]; ok && a.NodeID != req.NodeID {
			return fmt.Errorf("bad request: alloc %s is placed on node %s, not on %s", u.ID, a.NodeID, req.NodeID)
		}
		if f.reject[u.ID] {
			return fmt.Errorf("bad request: alloc %s: rejected by the test", u.ID)
		}
	}
	for _, u := range req.Alloc {
		f.updates = append(f.updates, u.Copy())
		a, ok := f.allocs[u.ID]
		if !ok {
			continue // already garbage collected; the real server ignores it too
		}
		if a.StaleClientReport(u) {
			continue // based on a version older than the last change, as the real server ignores it
		}
		na, err := a.ApplyClientUpdate(u)
		if err != nil {
			return err
		}
		f.allocs[u.ID] = na
	}
	resp.Index = f.bumpLocked()
	return nil
}
