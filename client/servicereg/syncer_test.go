package servicereg

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// fakeServers answers the two node RPCs the way the servers do, holding
// registrations by ID, and can refuse the next calls.
type fakeServers struct {
	mu      sync.Mutex
	regs    map[string]*structs.ServiceRegistration
	calls   []string
	failing int
}

func newFakeServers() *fakeServers {
	return &fakeServers{regs: map[string]*structs.ServiceRegistration{}}
}

func (f *fakeServers) RPC(_ context.Context, method string, args, _ any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, method)
	if f.failing > 0 {
		f.failing--
		return errors.New("no servers reachable")
	}
	switch req := args.(type) {
	case *structs.ServiceRegistrationUpsertRequest:
		if req.NodeID != "node-1" || req.SecretID != "secret-1" {
			return errors.New("wrong node identity")
		}
		for _, r := range req.Services {
			f.regs[r.ID] = r
		}
	case *structs.ServiceRegistrationDeleteRequest:
		for _, id := range req.IDs {
			delete(f.regs, id)
		}
	default:
		return errors.New("unexpected request")
	}
	return nil
}

func (f *fakeServers) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for id := range f.regs {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (f *fakeServers) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

// allocSource is the client's alloc list, changed by the test.
type allocSource struct {
	mu     sync.Mutex
	allocs []*structs.Allocation
}

func (s *allocSource) get() []*structs.Allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*structs.Allocation, len(s.allocs))
	for i, a := range s.allocs {
		out[i] = a.Copy()
	}
	return out
}

func (s *allocSource) set(a ...*structs.Allocation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.allocs = a
}

var bothIDs = []string{"_nomad-task-alloc-1-group-web-web-http", "_nomad-task-alloc-1-srv-admin-admin"}

func newTestSyncer(srv *fakeServers, src *allocSource, clk clock.Clock) *Syncer {
	return New(Config{RPC: srv, Allocs: src.get, Node: testNode, Clock: clk, RetryMin: time.Second, RetryMax: 4 * time.Second})
}

func TestSyncerRegistersOnceAndDeregistersWhenTheAllocStops(t *testing.T) {
	srv, src := newFakeServers(), &allocSource{}
	src.set(testAlloc())
	s := newTestSyncer(srv, src, clock.NewFake(time.Time{}))
	ctx := context.Background()
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := srv.ids(); !reflect.DeepEqual(got, bothIDs) {
		t.Fatalf("registered %v, want %v", got, bothIDs)
	}
	calls := srv.callCount()
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if srv.callCount() != calls {
		t.Fatal("a pass with nothing changed called the servers")
	}
	stopped := testAlloc()
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	src.set(stopped)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := srv.ids(); len(got) != 0 {
		t.Fatalf("after the stop the servers still hold %v", got)
	}
}

// A restarted client derives the same IDs: it registers again without
// duplicates, and deletes what its allocs no longer want even though it
// never saw it registered.
func TestSyncerAfterAClientRestartLeavesNoDuplicates(t *testing.T) {
	srv, src := newFakeServers(), &allocSource{}
	src.set(testAlloc())
	if err := newTestSyncer(srv, src, clock.NewFake(time.Time{})).Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := testAlloc()
	a.TaskStates["srv"].State = structs.TaskStateDead
	src.set(a)
	if err := newTestSyncer(srv, src, clock.NewFake(time.Time{})).Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := srv.ids(); !reflect.DeepEqual(got, bothIDs[:1]) {
		t.Fatalf("after the restart the servers hold %v, want only %v", got, bothIDs[:1])
	}
}

// A deregistration that fails is retried, with backoff on the client's
// clock, until the servers acknowledge it.
func TestSyncerRetriesADeregistrationUntilAcknowledged(t *testing.T) {
	srv, src := newFakeServers(), &allocSource{}
	src.set(testAlloc())
	clk := clock.NewFake(time.Time{})
	s := newTestSyncer(srv, src, clk)
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	// The resync timer is the one waiter while nothing fails.
	if !clk.WaitForTimers(1, 5*time.Second) {
		t.Fatal("the syncer never waited")
	}
	srv.mu.Lock()
	srv.failing = 3
	srv.mu.Unlock()
	stopped := testAlloc()
	stopped.ClientStatus = structs.AllocClientStatusComplete
	src.set(stopped)
	s.Kick()
	// Each failed pass leaves one retry timer beside the resync one;
	// firing it makes the next attempt, until the servers acknowledge.
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.ids()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the delete was never retried to success; servers hold %v", srv.ids())
		}
		if clk.WaitForTimers(2, 50*time.Millisecond) {
			clk.Advance(4 * time.Second)
		}
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	deletes := 0
	for _, c := range srv.calls {
		if c == "ServiceRegistration.Deregister" {
			deletes++
		}
	}
	if deletes != 4 || srv.failing != 0 {
		t.Fatalf("%d delete calls (%d refusals left), want 3 refused and 1 acknowledged", deletes, srv.failing)
	}
}
