package servers

import (
	"context"
	"errors"
	"testing"

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
