package nomad

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/helper/telemetry/telemetrytest"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// noticePeer is a real yamux pair over a pipe: the server end registers
// with the notifier, the client end collects the notices pushed to it.
type noticePeer struct {
	srv *yamux.Session
	mu  sync.Mutex
	got []structs.AllocNotice
}

func newNoticePeer(t *testing.T) *noticePeer {
	t.Helper()
	a, b := net.Pipe()
	srv, err := yamux.Server(a, yamux.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	cli, err := yamux.Client(b, yamux.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := &noticePeer{srv: srv}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			st, err := cli.AcceptStream()
			if err != nil {
				return
			}
			var head [3]byte
			if _, err := io.ReadFull(st, head[:]); err != nil || rpcx.ConnType(head[0]) != rpcx.RPCNotice {
				st.Close()
				continue
			}
			buf := make([]byte, binary.BigEndian.Uint16(head[1:]))
			if _, err := io.ReadFull(st, buf); err != nil {
				st.Close()
				continue
			}
			st.Close()
			var n structs.AllocNotice
			if err := rpcx.Decode(buf, &n); err == nil {
				p.mu.Lock()
				p.got = append(p.got, n)
				p.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		srv.Close()
		cli.Close()
		<-done
	})
	return p
}

func (p *noticePeer) notices() []structs.AllocNotice {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]structs.AllocNotice(nil), p.got...)
}

// frozenSession is the server end of a session whose peer never reads:
// a client stopped with SIGSTOP.
func frozenSession(t *testing.T) *yamux.Session {
	t.Helper()
	a, b := net.Pipe()
	srv, err := yamux.Server(a, yamux.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Close()
		b.Close()
	})
	return srv
}

func testNotifier(t *testing.T, timeout time.Duration) *allocNotifier {
	t.Helper()
	return newAllocNotifier(hclog.NewNullLogger(), timeout, func(string) bool { return true })
}

// runNotifier runs n until the test ends.
func runNotifier(t *testing.T, n *allocNotifier) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		n.run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func at(index uint64) func() (uint64, error) {
	return func() (uint64, error) { return index, nil }
}

func waitNotices(t *testing.T, p *noticePeer, want int) []structs.AllocNotice {
	t.Helper()
	WaitFor(t, 20*time.Second, func() (bool, string) {
		got := p.notices()
		return len(got) >= want, "notices so far: " + strconv.Itoa(len(got))
	})
	return p.notices()
}

func TestAllocNotifierNotifiesOnceForAChangePastTheRegisteredIndex(t *testing.T) {
	n := testNotifier(t, 5*time.Second)
	p := newNoticePeer(t)
	cur, err := n.register("n1", p.srv, 10, at(10))
	if err != nil || cur != 10 {
		t.Fatalf("register = %d, %v; want 10", cur, err)
	}
	// Not news: at or below what the node has.
	n.AllocsChanged("n1", 9)
	n.AllocsChanged("n1", 10)
	// Another node's change is not this node's.
	n.AllocsChanged("n2", 50)
	if len(n.ready) != 0 {
		t.Fatalf("changes at or below the registered index queued %v", n.ready)
	}
	// Two changes before the push coalesce into one notice at the
	// highest index.
	n.AllocsChanged("n1", 12)
	n.AllocsChanged("n1", 15)
	n.AllocsChanged("n1", 13)
	if len(n.ready) != 1 {
		t.Fatalf("ready = %v, want n1 once", n.ready)
	}
	runNotifier(t, n)
	got := waitNotices(t, p, 1)
	if got[0] != (structs.AllocNotice{NodeID: "n1", Index: 15}) {
		t.Fatalf("notice = %+v, want n1 at 15", got[0])
	}
	WaitFor(t, 10*time.Second, func() (bool, string) { return n.registered() == 0, "the registration outlived its notice" })

	// The registration was used up: later changes wait for the node to
	// register again.
	n.AllocsChanged("n1", 20)
	if _, err := n.register("n1", p.srv, 15, at(20)); err != nil {
		t.Fatal(err)
	}
	n.AllocsChanged("n1", 21)
	got = waitNotices(t, p, 2)
	if len(got) != 2 || got[1].Index != 21 {
		t.Fatalf("notices = %+v, want a second at 21 only", got)
	}
	if n.pushedCount() != 2 {
		t.Fatalf("pushed = %d, want 2", n.pushedCount())
	}
}

func TestAllocNotifierRegistrationReplacesTheNodesEarlierOne(t *testing.T) {
	n := testNotifier(t, 5*time.Second)
	old, cur := newNoticePeer(t), newNoticePeer(t)
	if _, err := n.register("n1", old.srv, 5, at(5)); err != nil {
		t.Fatal(err)
	}
	n.AllocsChanged("n1", 6) // queued for the old registration
	if _, err := n.register("n1", cur.srv, 6, at(6)); err != nil {
		t.Fatal(err)
	}
	if n.registered() != 1 {
		t.Fatalf("registered = %d, want one entry per node", n.registered())
	}
	n.AllocsChanged("n1", 6) // the new registration has it already
	n.AllocsChanged("n1", 8)
	if len(n.ready) != 1 {
		t.Fatalf("ready = %v: a node must be queued once", n.ready)
	}
	runNotifier(t, n)
	got := waitNotices(t, cur, 1)
	if got[0].Index != 8 {
		t.Fatalf("notice = %+v, want index 8", got[0])
	}
	if o := old.notices(); len(o) != 0 {
		t.Fatalf("the replaced registration's session got %+v", o)
	}
}

func TestAllocNotifierDropsRegistrationsOfClosedSessions(t *testing.T) {
	n := testNotifier(t, 5*time.Second)
	pushed := 0
	n.push = func(*yamux.Session, []byte) error { pushed++; return nil }
	a, b := newNoticePeer(t), newNoticePeer(t)
	for id, p := range map[string]*noticePeer{"a": a, "b": b} {
		if _, err := n.register(id, p.srv, 1, at(1)); err != nil {
			t.Fatal(err)
		}
	}
	a.srv.Close()
	b.srv.Close()
	// One closed session is found at push time...
	n.AllocsChanged("a", 2)
	if _, _, ok := n.next(); ok {
		t.Fatal("a notice for a closed session was handed out to push")
	}
	// ...the other by the sweep.
	n.sweep()
	if n.registered() != 0 || pushed != 0 {
		t.Fatalf("registered = %d, pushed = %d; want both dropped unpushed", n.registered(), pushed)
	}
}

func TestAllocNotifierSweepDropsRegistrationsOfGoneNodes(t *testing.T) {
	gone := map[string]bool{"gone": true}
	n := newAllocNotifier(hclog.NewNullLogger(), time.Second, func(id string) bool { return !gone[id] })
	p := newNoticePeer(t)
	for _, id := range []string{"gone", "kept"} {
		if _, err := n.register(id, p.srv, 1, at(1)); err != nil {
			t.Fatal(err)
		}
	}
	n.sweep()
	if n.isRegistered("gone") || !n.isRegistered("kept") {
		t.Fatalf("after the sweep: gone %v, kept %v; want only kept", n.isRegistered("gone"), n.isRegistered("kept"))
	}
}

// A frozen client (its session's peer stopped reading) must not hold up
// the notices of others, however many of its nodes have one due.
func TestAllocNotifierFrozenPeerDoesNotStallOthers(t *testing.T) {
	// A push timeout far beyond the test's wait: the live notice must
	// not need the frozen pushes to end.
	n := testNotifier(t, 2*time.Minute)
	frozen := frozenSession(t)
	for i := range 3 * allocNoticeWorkers {
		id := "frozen-" + string(rune('a'+i))
		if _, err := n.register(id, frozen, 1, at(1)); err != nil {
			t.Fatal(err)
		}
		n.AllocsChanged(id, 2)
	}
	live := newNoticePeer(t)
	if _, err := n.register("live", live.srv, 1, at(1)); err != nil {
		t.Fatal(err)
	}
	n.AllocsChanged("live", 2)
	runNotifier(t, n)
	got := waitNotices(t, live, 1)
	if got[0] != (structs.AllocNotice{NodeID: "live", Index: 2}) {
		t.Fatalf("notice = %+v", got[0])
	}
	n.mu.Lock()
	parked := len(n.busy[frozen])
	n.mu.Unlock()
	if parked < 2*allocNoticeWorkers {
		t.Fatalf("only %d of %d notices parked behind the frozen session's push: one push per session at a time", parked, 3*allocNoticeWorkers)
	}
	// Closing the frozen session (as the push's timeout would) ends its
	// push before the test's cleanup waits for the workers.
	frozen.Close()
}

func TestAllocNotifierQueueHoldsEachNodeOnce(t *testing.T) {
	n := testNotifier(t, time.Second)
	p := newNoticePeer(t)
	const nodes = 50
	for i := range nodes {
		if _, err := n.register(nodeName(i), p.srv, 1, at(1)); err != nil {
			t.Fatal(err)
		}
	}
	for index := uint64(2); index < 200; index++ {
		for i := range nodes {
			n.AllocsChanged(nodeName(i), index)
		}
		if index%50 == 0 {
			n.Reset()
			// Registering again keeps the node's place, not a second one.
			if _, err := n.register(nodeName(0), p.srv, index, at(index)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(n.ready) != nodes {
		t.Fatalf("ready holds %d items for %d nodes", len(n.ready), nodes)
	}
}

func nodeName(i int) string { return "node-" + string(rune('A'+i/26)) + string(rune('a'+i%26)) }

// A registration keeps the store's copy of the node ID, not the one the
// request decoded: it lives as long as the node waits, and the request's
// copy would be a second one per node.
func TestAllocNotifierKeepsTheStoresCopyOfANodeID(t *testing.T) {
	store, err := state.NewStateStore(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Write(1, func(tx *state.Txn) error { return tx.UpsertNode(itNode("keeps-the-stores-id-in-notices"), nil) }); err != nil {
		t.Fatal(err)
	}
	stored, err := store.NodeByID(nil, "keeps-the-stores-id-in-notices")
	if err != nil || stored == nil {
		t.Fatalf("NodeByID = %v, %v", stored, err)
	}
	n := testNotifier(t, 5*time.Second)
	peer := newNoticePeer(t)
	for range 2 { // a first registration and one replacing it
		if _, err := n.register(strings.Clone(stored.ID), peer.srv, 1, at(1)); err != nil {
			t.Fatal(err)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.entries) != 1 {
		t.Fatalf("%d registrations, want 1", len(n.entries))
	}
	for key := range n.entries {
		if unsafe.StringData(key) != unsafe.StringData(stored.ID) {
			t.Error("the registration keeps the request's copy of the node ID")
		}
	}
}

// A registration reads the state store after its entry is in place and
// without the notifier's lock: an entry the FSM applies during the read
// neither waits for it (AllocsChanged would block on the lock) nor goes
// unnoticed.
func TestAllocNotifierRegisterReadsWithoutHoldingTheLock(t *testing.T) {
	n := testNotifier(t, 5*time.Second)
	p := newNoticePeer(t)
	cur, err := n.register("n1", p.srv, 5, func() (uint64, error) {
		applied := make(chan struct{})
		go func() {
			n.AllocsChanged("n1", 7) // an entry committed after the read began
			close(applied)
		}()
		select {
		case <-applied:
		case <-time.After(10 * time.Second):
			t.Error("AllocsChanged waited for a registration's state read")
		}
		return 6, nil
	})
	if err != nil || cur != 6 {
		t.Fatalf("register = %d, %v; want 6", cur, err)
	}
	runNotifier(t, n)
	if got := waitNotices(t, p, 1); got[0] != (structs.AllocNotice{NodeID: "n1", Index: 7}) {
		t.Fatalf("notice = %+v, want n1 at 7", got[0])
	}
}

// A notice that cannot be pushed closes its session: the registration is
// used up, and the client registers again when it sees the close rather
// than at its lease.
func TestAllocNotifierClosesTheSessionOfAFailedPush(t *testing.T) {
	n := testNotifier(t, 5*time.Second)
	p := newNoticePeer(t)
	n.push = func(*yamux.Session, []byte) error { return errors.New("refused") }
	if _, err := n.register("n1", p.srv, 1, at(1)); err != nil {
		t.Fatal(err)
	}
	n.AllocsChanged("n1", 2)
	runNotifier(t, n)
	WaitFor(t, 10*time.Second, func() (bool, string) { return p.srv.IsClosed(), "the session is still open" })
}

// Operators see the notifier in the server's metrics: nodes registered,
// notices due, and pushes as they succeed or fail.
func TestAllocNotifierMetricsFollowRegistrationsAndPushes(t *testing.T) {
	m, sink := telemetrytest.New()
	n := testNotifier(t, 5*time.Second)
	n.metrics = m
	good, bad := newNoticePeer(t), newNoticePeer(t)
	n.push = func(sess *yamux.Session, _ []byte) error {
		if sess == bad.srv {
			return errors.New("peer frozen")
		}
		return nil
	}
	s := &Server{metrics: m, allocNotices: n}
	gauge := func(name string) float32 {
		t.Helper()
		return emittedGauge(t, s.emitNoticeStats, sink, name)
	}
	for id, p := range map[string]*noticePeer{"good": good, "bad": bad} {
		if _, err := n.register(id, p.srv, 1, at(1)); err != nil {
			t.Fatal(err)
		}
	}
	if r, q := gauge("nomad.nomad.alloc_notices.registered"), gauge("nomad.nomad.alloc_notices.queued"); r != 2 || q != 0 {
		t.Fatalf("two nodes registered, nothing changed: registered %v, queued %v", r, q)
	}
	n.AllocsChanged("good", 2)
	n.AllocsChanged("bad", 2)
	if q := gauge("nomad.nomad.alloc_notices.queued"); q != 2 {
		t.Fatalf("two notices due before any push: queued %v", q)
	}
	runNotifier(t, n)
	WaitFor(t, 20*time.Second, func() (bool, string) {
		st := n.stats()
		return st.Pushed+st.Failed == 2, "pushes ended so far: " + strconv.FormatUint(st.Pushed+st.Failed, 10)
	})
	if _, sum := sink.Counter("nomad.nomad.alloc_notices.pushed"); sum != 1 {
		t.Fatalf("pushed = %v, want 1", sum)
	}
	if _, sum := sink.Counter("nomad.nomad.alloc_notices.push_failed"); sum != 1 {
		t.Fatalf("push_failed = %v, want 1", sum)
	}
	if r, q := gauge("nomad.nomad.alloc_notices.registered"), gauge("nomad.nomad.alloc_notices.queued"); r != 0 || q != 0 {
		t.Fatalf("after both notices: registered %v, queued %v; want 0 and 0", r, q)
	}
	if !bad.srv.IsClosed() {
		t.Fatal("a failed push left its session open: the client would wait for its lease")
	}
}

// The queued gauge counts notices due, not places in the queue: a node
// that registered again with the change already read keeps its place but
// has nothing due.
func TestAllocNotifierQueuedCountsOnlyNoticesDue(t *testing.T) {
	n := testNotifier(t, time.Second)
	p := newNoticePeer(t)
	if _, err := n.register("n1", p.srv, 1, at(1)); err != nil {
		t.Fatal(err)
	}
	n.AllocsChanged("n1", 2)
	if q := n.stats().Queued; q != 1 {
		t.Fatalf("queued = %d with one notice due, want 1", q)
	}
	if _, err := n.register("n1", p.srv, 2, at(2)); err != nil {
		t.Fatal(err)
	}
	if len(n.ready) != 1 {
		t.Fatalf("ready = %v: the node should keep its place", n.ready)
	}
	if q := n.stats().Queued; q != 0 {
		t.Fatalf("queued = %d after the node registered at the change, want 0", q)
	}
}
