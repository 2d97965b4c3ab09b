package nomad

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	metrics "github.com/hashicorp/go-metrics"
	"github.com/hashicorp/yamux"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Server-pushed alloc-change notices (server heap per node, issue 16).
//
// A client used to learn of changes to its node's allocs from a blocking
// Node.GetClientAllocs held open all the time: per waiting node the server
// held a yamux stream, a codec, two goroutines, a timer and a context,
// about 3 KB, for something that changes rarely. Instead a client
// registers (Node.WatchAllocs) and the server keeps only an allocWatch:
// the client's session and the index it has, a few dozen bytes. When an
// applied entry moves the node's alloc index past that (the FSM tells
// AllocsChanged), the server pushes one structs.AllocNotice over the
// session and forgets the registration; the client fetches and registers
// again.
//
// The FSM must never wait for a client, so AllocsChanged only marks the
// node's notice pending and queues the node once: the queue holds each
// registered node at most once, so it is bounded by the registrations,
// and notices for one node coalesce to the highest index. A few workers
// push. Each push is bounded by a timeout (rpcx.PushNotice closes the
// session of a peer that does not take it), and a session has at most one
// push in flight (the others for it wait, parked, without holding a
// worker), so a frozen client holds one worker for the timeout at most
// while the others serve everyone else.
//
// Registrations whose session closed are dropped when a notice for them
// comes up, and by a sweep every allocNoticeSweep, which also drops those
// of nodes no longer in the state store: no goroutine waits on any one
// session.

const (
	// allocNoticeWorkers is how many notices may be pushed at once.
	allocNoticeWorkers = 8
	// allocNoticeSweep is how often registrations of closed sessions and
	// of gone nodes are dropped.
	allocNoticeSweep = time.Minute
)

// allocWatch is one node's registration.
type allocWatch struct {
	sess *yamux.Session
	// index is the alloc index the node has applied: only a change past
	// it is news.
	index uint64
	// pending is the index of the notice to push; zero when none.
	pending uint64
	// queued is set while the node is in the ready queue or parked
	// behind its session's push, so it is queued once at most.
	queued bool
}

// allocNotifier keeps the registrations and pushes the notices. It is
// safe for concurrent use; AllocsChanged never blocks on a client.
//
// Ownership: run's workers and the sweep loop belong to whoever calls run
// (the server, with its context); they end with it.
type allocNotifier struct {
	logger hclog.Logger
	// push sends one notice's payload over a session: rpcx.PushNotice
	// with the timeout, or a test's twin.
	push func(sess *yamux.Session, payload []byte) error
	// nodeExists reports whether a node is still registered, for the
	// sweep.
	nodeExists func(nodeID string) bool

	mu      sync.Mutex
	entries map[string]*allocWatch
	// ready is the queue of nodes with a notice to push.
	ready []string
	// busy holds the sessions with a push in flight, each with the nodes
	// waiting for it to end.
	busy map[*yamux.Session][]string
	// wake has a token when ready may be non-empty.
	wake chan struct{}
	// registrations, pushed and failed count the registrations taken,
	// the notices pushed and those whose push failed (its session was
	// then closed), for tests and operators.
	registrations, pushed, failed uint64
	// metrics, when set, counts pushes as they end
	// (nomad.nomad.alloc_notices.pushed / push_failed).
	metrics *metrics.Metrics
}

func newAllocNotifier(logger hclog.Logger, timeout time.Duration, nodeExists func(string) bool) *allocNotifier {
	return &allocNotifier{
		logger:     logger,
		push:       func(sess *yamux.Session, payload []byte) error { return rpcx.PushNotice(sess, payload, timeout) },
		nodeExists: nodeExists,
		entries:    map[string]*allocWatch{},
		busy:       map[*yamux.Session][]string{},
		wake:       make(chan struct{}, 1),
	}
}

// register records that nodeID, connected over sess, has applied index,
// replacing any registration it had, then reads the node's alloc index
// from the state store with current and returns it. The entry is in
// place before the read, and the FSM tells AllocsChanged only after its
// commit, so an entry applied meanwhile is either seen by current or
// finds the registration and notifies: none falls between. current runs
// without the lock, so a registration (a fleet re-registering after a
// deploy, or a node calling again and again) never holds up the FSM's
// AllocsChanged for the length of a state read.
func (n *allocNotifier) register(nodeID string, sess *yamux.Session, index uint64, current func() (uint64, error)) (uint64, error) {
	// The registration lives as long as the node waits, and a waiting
	// node registers again after every notice: keep the store's copy of
	// its ID, not the one each request decoded.
	nodeID = state.InternString(nodeID)
	n.mu.Lock()
	w := &allocWatch{sess: sess, index: index}
	if old, ok := n.entries[nodeID]; ok {
		// The node's place in the queue serves the new registration.
		w.queued = old.queued
	}
	n.entries[nodeID] = w
	n.registrations++
	n.mu.Unlock()
	// On an error the entry stays: a notice it gets is harmless, and the
	// client, told of the error, registers again.
	return current()
}

// AllocsChanged is told by the FSM that an applied entry moved nodeID's
// alloc index to index. It queues a notice if the node waits for one
// below that.
func (n *allocNotifier) AllocsChanged(nodeID string, index uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w, ok := n.entries[nodeID]
	if !ok || index <= w.index || index <= w.pending {
		return
	}
	n.setPending(nodeID, w, index)
}

// Reset is told that a snapshot replaced the state store: any node's
// allocs may have changed without an entry saying so, so every registered
// node is told to look.
func (n *allocNotifier) Reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for id, w := range n.entries {
		if w.pending == 0 {
			n.setPending(id, w, w.index+1)
		}
	}
}

// setPending marks w's notice due at index and queues the node unless it
// is queued already. n.mu is held.
func (n *allocNotifier) setPending(nodeID string, w *allocWatch, index uint64) {
	w.pending = index
	if w.queued {
		return
	}
	w.queued = true
	n.ready = append(n.ready, nodeID)
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// run starts the workers and the sweep, and returns once ctx ends and
// they have stopped.
func (n *allocNotifier) run(ctx context.Context) {
	var wg sync.WaitGroup
	for range allocNoticeWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.work(ctx)
		}()
	}
	ticker := time.NewTicker(allocNoticeSweep)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-ticker.C:
			n.sweep()
		}
	}
}

// work pushes notices until ctx ends.
func (n *allocNotifier) work(ctx context.Context) {
	for {
		nodeID, w, ok := n.next()
		if !ok {
			select {
			case <-n.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		// More may be ready: let another worker look.
		select {
		case n.wake <- struct{}{}:
		default:
		}
		n.pushOne(nodeID, w)
	}
}

// next takes the next notice that can be pushed now, removing its
// registration (a notice is sent once; the client registers again).
// Notices for a session with a push in flight are parked behind it, and
// those of closed sessions dropped.
func (n *allocNotifier) next() (string, allocWatch, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for len(n.ready) > 0 {
		nodeID := n.ready[0]
		n.ready[0] = ""
		n.ready = n.ready[1:]
		if len(n.ready) == 0 {
			n.ready = nil // let the backing array go
		}
		w, ok := n.entries[nodeID]
		if !ok {
			continue
		}
		if w.pending == 0 {
			w.queued = false
			continue
		}
		if w.sess.IsClosed() {
			delete(n.entries, nodeID)
			continue
		}
		if parked, busy := n.busy[w.sess]; busy {
			n.busy[w.sess] = append(parked, nodeID)
			continue
		}
		n.busy[w.sess] = nil
		delete(n.entries, nodeID)
		return nodeID, *w, true
	}
	return "", allocWatch{}, false
}

// pushOne pushes w's notice, then lets the nodes parked behind its
// session go again.
func (n *allocNotifier) pushOne(nodeID string, w allocWatch) {
	payload, err := rpcx.Encode(&structs.AllocNotice{NodeID: nodeID, Index: w.pending})
	if err == nil {
		err = n.push(w.sess, payload)
	}
	if err != nil {
		// The registration is used up, so the client must find out:
		// closing the session makes it register again at once (it
		// watches the session's close), where otherwise it would wait
		// for its lease.
		n.logger.Debug("could not push an alloc notice; closing the session", "node_id", nodeID, "index", w.pending, "error", err)
		w.sess.Close()
	}
	if n.metrics != nil {
		if err == nil {
			n.metrics.IncrCounter(keyAllocNoticesPushed, 1)
		} else {
			n.metrics.IncrCounter(keyAllocNoticesPushFailed, 1)
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err == nil {
		n.pushed++
	} else {
		n.failed++
	}
	parked := n.busy[w.sess]
	delete(n.busy, w.sess)
	if len(parked) > 0 {
		n.ready = append(n.ready, parked...)
		select {
		case n.wake <- struct{}{}:
		default:
		}
	}
}

// sweep drops the registrations of closed sessions and of nodes no
// longer in the state store. Queued ones are left for next to drop.
func (n *allocNotifier) sweep() {
	n.mu.Lock()
	ids := make([]string, 0, len(n.entries))
	for id, w := range n.entries {
		if w.queued {
			continue
		}
		if w.sess.IsClosed() {
			delete(n.entries, id)
			continue
		}
		ids = append(ids, id)
	}
	n.mu.Unlock()
	for _, id := range ids {
		if n.nodeExists == nil || n.nodeExists(id) {
			continue
		}
		n.mu.Lock()
		if w, ok := n.entries[id]; ok && !w.queued {
			delete(n.entries, id)
		}
		n.mu.Unlock()
	}
}

// registered is how many nodes wait for a notice, for tests and metrics.
func (n *allocNotifier) registered() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.entries)
}

// noticeStats is what the notifier holds at one moment and has done.
type noticeStats struct {
	// Registered is how many nodes wait for a notice; Queued how many of
	// them have one due and not yet pushed (ready, or parked behind
	// their session's push in flight).
	Registered, Queued int
	// Registrations, Pushed and Failed count the registrations taken,
	// the notices pushed and the pushes that failed.
	Registrations, Pushed, Failed uint64
}

func (n *allocNotifier) stats() noticeStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := noticeStats{Registered: len(n.entries), Registrations: n.registrations, Pushed: n.pushed, Failed: n.failed}
	// The ready queue and the parked lists also hold nodes next will
	// skip (one that registered again, a closed session): count the
	// registrations with a notice due instead.
	for _, w := range n.entries {
		if w.pending != 0 {
			st.Queued++
		}
	}
	return st
}

// pushedCount is how many notices were pushed.
func (n *allocNotifier) pushedCount() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pushed
}

// setupAllocNotices makes the server's notifier, wires it to the FSM and
// starts it; it stops with the server's context.
func (s *Server) setupAllocNotices() {
	s.allocNotices = newAllocNotifier(s.logger.Named("alloc_notices"), rpcx.DefaultNoticeTimeout, func(nodeID string) bool {
		node, err := s.State().NodeByID(nil, nodeID)
		return err != nil || node != nil
	})
	s.allocNotices.metrics = s.metrics
	s.fsm.SetAllocSink(s.allocNotices)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.allocNotices.run(s.ctx)
	}()
}

// isRegistered reports whether nodeID waits for a notice.
func (n *allocNotifier) isRegistered(nodeID string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.entries[nodeID]
	return ok
}

// AllocNoticeRegistered reports whether nodeID is registered on this
// server for an alloc-change notice (Node.WatchAllocs), for tests and
// operators.
func (s *Server) AllocNoticeRegistered(nodeID string) bool {
	return s.allocNotices.isRegistered(nodeID)
}

// AllocNoticeRegistrations is how many alloc-notice registrations this
// server has taken (Node.WatchAllocs calls), for tests and operators.
func (s *Server) AllocNoticeRegistrations() uint64 { return s.allocNotices.stats().Registrations }

// AllocNoticesPushed is how many alloc-change notices this server has
// pushed.
func (s *Server) AllocNoticesPushed() uint64 { return s.allocNotices.pushedCount() }
