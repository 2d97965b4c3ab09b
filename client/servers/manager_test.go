package servers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

type fakeTransport struct {
	down  map[string]bool
	calls []string
}

func (f *fakeTransport) RPC(ctx context.Context, addr, method string, args, reply any) error {
	f.calls = append(f.calls, addr)
	if f.down[addr] {
		return errors.New("connection refused")
	}
	if addr == "remote-err" {
		return rpcx.NewRemoteError(structs.ErrNodeSecretDenied)
	}
	return nil
}

func TestFailoverRotatesFailedServersToTheEnd(t *testing.T) {
	ft := &fakeTransport{down: map[string]bool{"a": true}}
	m := New(ft, []string{"a", "b", "c"})
	if err := m.RPC(context.Background(), "Node.UpdateStatus", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := m.Servers(); got[0] != "b" || got[2] != "a" {
		t.Fatalf("order %v", got)
	}
	ft.calls = nil
	m.RPC(context.Background(), "x", nil, nil)
	if len(ft.calls) != 1 || ft.calls[0] != "b" {
		t.Fatalf("the next call should go straight to b, went to %v", ft.calls)
	}
	ft.down = map[string]bool{"a": true, "b": true, "c": true}
	if err := m.RPC(context.Background(), "x", nil, nil); err == nil {
		t.Fatal("want an error when no server answers")
	}
}

func TestRemoteErrorIsNotRetriedElsewhere(t *testing.T) {
	ft := &fakeTransport{}
	m := New(ft, []string{"remote-err", "b"})
	if err := m.RPC(context.Background(), "x", nil, nil); err == nil || len(ft.calls) != 1 {
		t.Fatalf("err %v calls %v", err, ft.calls)
	}
}

func TestSetServersKeepsConfiguredOnesAndCurrentFirst(t *testing.T) {
	m := New(&fakeTransport{}, []string{"seed"})
	m.SetServers([]string{"s1", "s2"})
	if got := m.Servers(); len(got) != 3 || got[0] != "seed" {
		t.Fatalf("the configured server answered last and should stay first: %v", got)
	}
	m.Demote("seed")
	m.Demote("s1")
	m.SetServers([]string{"s1", "s2"})
	if got := m.Servers(); got[0] != "s2" || len(got) != 3 {
		t.Fatalf("the answering server should stay first: %v", got)
	}
}

// Moved closes when calls would next go to another server, and only then.
func TestMovedClosesWhenTheFirstServerChanges(t *testing.T) {
	closed := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	ft := &fakeTransport{down: map[string]bool{}}
	m := New(ft, []string{"a", "b"})
	moved := m.Moved()
	m.SetServers([]string{"a", "c"}) // a stays first
	if err := m.RPC(context.Background(), "x", nil, nil); err != nil || closed(moved) {
		t.Fatalf("closed with a still first (err %v)", err)
	}
	m.Demote("c") // not first
	if closed(moved) {
		t.Fatal("closed when a server other than the first was demoted")
	}
	ft.down["a"] = true
	if err := m.RPC(context.Background(), "x", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !closed(moved) {
		t.Fatalf("calls moved from a to %s and Moved did not close", m.Servers()[0])
	}
	next := m.Moved()
	if closed(next) {
		t.Fatal("the next Moved channel is closed already")
	}
	m.SetServers([]string{"z"}) // the answering server stays first
	if closed(next) {
		t.Fatalf("closed although %s stays first", m.Servers()[0])
	}
}

// hangingTransport never answers the servers in hang: a call there returns
// only when its context ends, as over a dead link or to a server waiting
// out an election.
type hangingTransport struct{ hang map[string]bool }

func (h hangingTransport) RPC(ctx context.Context, addr, method string, args, reply any) error {
	if h.hang[addr] {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// A call that runs out of time on a server demotes it, so the retry goes
// elsewhere; a call its caller gives up demotes nothing.
func TestTimedOutCallDemotesTheServerButACanceledOneDoesNot(t *testing.T) {
	m := New(hangingTransport{hang: map[string]bool{"a": true}}, []string{"a", "b"})
	moved := m.Moved()

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.RPC(ctx, "x", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled call: err %v", err)
	}
	if got := m.Servers(); got[0] != "a" {
		t.Fatalf("a canceled call demoted a: %v", got)
	}

	ctx, cancel = context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	if err := m.RPC(ctx, "Node.UpdateStatus", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timed-out call: err %v", err)
	}
	if got := m.Servers(); got[0] != "b" || got[1] != "a" {
		t.Fatalf("a timed out and should have moved to the end: %v", got)
	}
	select {
	case <-moved:
	default:
		t.Fatal("calls moved to b and Moved did not close")
	}
	if err := m.RPC(context.Background(), "Node.UpdateStatus", nil, nil); err != nil {
		t.Fatalf("the retry should go to b and succeed: %v", err)
	}
}
