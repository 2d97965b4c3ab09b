package nomad

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

const (
	// leaderWaitTimeout is how long a request waits for an election before
	// failing with "no cluster leader".
	leaderWaitTimeout = 5 * time.Second
	// defaultQueryTime and maxQueryTime bound blocking queries.
	defaultQueryTime = 5 * time.Minute
	maxQueryTime     = 10 * time.Minute
)

// setupEndpoints registers every RPC endpoint. Each lives in its own file.
func (s *Server) setupEndpoints() error {
	for name, e := range s.endpoints() {
		if err := s.rpcServer.Register(name, e); err != nil {
			return fmt.Errorf("registering %s endpoint: %w", name, err)
		}
	}
	return nil
}

// endpoints are the RPC endpoints by service name. The RPC fuzz targets
// read their methods' argument types from here too.
func (s *Server) endpoints() map[string]any {
	return map[string]any{
		"Status":     &Status{srv: s},
		"KV":         &KV{srv: s},
		"Operator":   &Operator{srv: s},
		"Job":        &Job{srv: s},
		"Node":       &Node{srv: s},
		"Alloc":      &Alloc{srv: s},
		"Eval":       &Eval{srv: s},
		"Plan":       &Plan{srv: s},
		"Deployment": &Deployment{srv: s},
		"System":     &System{srv: s},
		"ACL":        &ACL{srv: s},
		// Native service registrations (issue 13, services).
		"ServiceRegistration": &ServiceRegistration{srv: s},
		// Event stream (issue 15, events).
		"Event": &Event{srv: s},
	}
}

// forward sends a request to the leader when this server must not answer
// it: writes always go to the leader, reads too unless they allow stale
// answers. It reports whether it forwarded (and the reply is filled).
//
// It first refuses a request marked Forwarded that no server sent (see
// checkForwarded). A request it forwards carries this server's proof
// (signForwarded).
//
// A forwarded request ends when raft here stops following the leader it
// went to (see leaderWatch). A read then goes to the new leader; a write
// fails with ErrNotLeader, since the old leader may have committed it
// before it went silent: the caller decides whether to send it again.
func (s *Server) forward(method string, info structs.RPCInfo, args, reply any) (bool, error) {
	if err := s.checkForwarded(method, info); err != nil {
		return true, err
	}
	if info.IsRead() && info.AllowStaleRead() {
		return false, nil
	}
	// Whether another server sent it, before forwardOnce marks it.
	forwarded := info.IsForwarded()
	for attempt := 1; ; attempt++ {
		moved := s.leaders.current()
		if s.IsLeader() {
			return false, nil
		}
		leader, err := s.waitForLeader()
		if err != nil {
			return true, err
		}
		if leader == s.advertise {
			// We were just elected and are catching up; waitForLeader waited
			// until we are ready, so answer here.
			return false, nil
		}
		if forwarded {
			// Another server sent this here believing we lead, and we know of
			// a different leader: sending it on could bounce it between
			// servers with stale views. The caller retries once the election
			// settles.
			return true, structs.ErrNoLeader
		}
		if moved.Err() != nil && attempt < forwardAttempts {
			// The leader changed while we looked it up: nothing was sent.
			continue
		}
		err = s.forwardOnce(leader, method, info, moved, args, reply)
		if err == nil || moved.Err() == nil || info.CallContext().Err() != nil || rpcx.IsRemoteError(err) {
			return true, err
		}
		if !info.IsRead() {
			return true, fmt.Errorf("%w: the leader %s was replaced while this request was forwarded to it, and may or may not have applied it: %w",
				structs.ErrNotLeader, leader, err)
		}
		if attempt >= forwardAttempts {
			return true, fmt.Errorf("%w: the leader changed %d times while this request was forwarded: %w", structs.ErrNoLeader, attempt, err)
		}
	}
}

// forwardAttempts bounds how many leaders a forwarded read is sent to
// while leadership changes under it.
const forwardAttempts = 3

// forwardOnce sends a request to leader, with this server's proof. The call
// ends when its caller goes away (so the leader stops waiting on a
// blocking query nobody will read) and when moved is canceled (the leader
// changed).
func (s *Server) forwardOnce(leader, method string, info structs.RPCInfo, moved context.Context, args, reply any) error {
	info.SetForwarded()
	ctx, cancel := context.WithTimeout(s.ctx, maxQueryTime+time.Minute)
	defer cancel()
	stopCaller := context.AfterFunc(info.CallContext(), cancel)
	defer stopCaller()
	stopMoved := context.AfterFunc(moved, cancel)
	defer stopMoved()
	return s.forwardSigned(info, func() error { return s.connPool.RPC(ctx, leader, method, args, reply) })
}

// forwardTo sends a request this server makes for itself (joins) to a
// specific server. It never carries the server secret: the address came
// from an operator or from the answer of the server it names, and a
// secret sent there would be a secret given away.
func (s *Server) forwardTo(addr, method string, args, reply any) error {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	return s.connPool.RPC(ctx, addr, method, args, reply)
}

// waitForLeader returns the leader's address, waiting out an election.
func (s *Server) waitForLeader() (string, error) {
	deadline := time.NewTimer(leaderWaitTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		addr, _ := s.Leader()
		if addr != "" && (addr != s.advertise || s.IsLeader()) {
			return addr, nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return "", structs.ErrNoLeader
		case <-s.ctx.Done():
			return "", structs.ErrNoLeader
		}
	}
}

// setQueryMeta fills what every read reports about its freshness.
func (s *Server) setQueryMeta(m *structs.QueryMeta) {
	if s.IsLeader() {
		m.LastContact = 0
		m.KnownLeader = true
		return
	}
	m.LastContact = time.Since(s.raft.LastContact())
	addr, _ := s.Leader()
	m.KnownLeader = addr != ""
}

// queryFn runs one read against a state store, adding what it watched to
// ws, and returns the index the answer reflects.
type queryFn func(ws memdb.WatchSet, st *state.StateStore) (uint64, error)

// blockingQuery answers a read, blocking while the answer's index is not
// newer than opts.MinQueryIndex (up to MaxQueryTime, default 5 minutes).
// A restore of the state store wakes it too, so it re-runs on the new one.
//
// It stops waiting, and answers with what it has, as soon as its caller is
// gone (the call's context ends: the HTTP client disconnected, the stream
// closed). While it waits it counts against the server's blocking-query
// limits; past them it is refused at once (see blockingLimiter). Each
// wake re-checks the token it was allowed with (blocking_rights.go).
func (s *Server) blockingQuery(opts *structs.QueryOptions, meta *structs.QueryMeta, fn queryFn) error {
	s.metrics.IncrCounter(keyRPCQuery, 1)
	wait := opts.MaxQueryTime
	if wait <= 0 {
		wait = defaultQueryTime
	}
	if wait > maxQueryTime {
		wait = maxQueryTime
	}
	// The wait ends with the call (the caller hung up), at the deadline,
	// or when the server stops (a channel in every watch set below closes
	// then, and when a restore abandons the store: blocking_wake.go). A
	// fleet's clients each hold one of these open at all times, so a
	// waiter holds no context of its own (a timer context also
	// registered itself with the call's context and allocated a channel
	// of its own), no goroutine for the watch and, for a long wait, no
	// timer of its own (blocking_deadlines.go): a select on the call's
	// done channel and on a deadline channel taken at the first wait.
	callCtx := opts.CallContext()
	deadline := time.Now().Add(wait)
	var expired <-chan struct{}
	counted := false
	var held heldQueryRights
	for {
		if counted {
			// Woken: the token must still grant what it did.
			if stand, err := held.stand(); !stand {
				return err
			}
		}
		// One snapshot per attempt, so the index and the answer agree
		// (see state.BlockingQuery).
		st := s.State().View()
		ws := memdb.NewWatchSet()
		ws.Add(s.queryWake.of(st.AbandonCh(), s.ctx.Done()))
		idx, err := fn(ws, st)
		if idx == 0 {
			// Never report index 0: clients treat it as "no blocking".
			idx = 1
		}
		meta.Index = idx
		s.setQueryMeta(meta)
		if err != nil || opts.MinQueryIndex == 0 || idx > opts.MinQueryIndex {
			return err
		}
		if !counted {
			release, err := s.blockingLimits.acquire(blockingClient(opts))
			if err != nil {
				return err
			}
			defer release()
			counted = true
			// Only a query that waits pays for knowing its rights.
			held = s.heldRights(opts)
			var stop func()
			expired, stop = s.queryDeadlines.until(deadline, wait)
			defer stop()
		}
		if !watch(callCtx, expired, ws) || s.ctx.Err() != nil {
			return nil
		}
	}
}

// watchFewMax is how many channels watch selects on directly; a blocking
// query usually watches three or four.
const watchFewMax = 6

// watch waits until a channel of ws fires (true), or ctx ends or expired
// fires (false). It selects on a few channels directly, without
// allocating (ws.WatchCtx copies them into a fresh 32-slot slice per wait,
// and more than that takes goroutines).
func watch(ctx context.Context, expired <-chan struct{}, ws memdb.WatchSet) bool {
	if len(ws) > watchFewMax {
		return watchMany(ctx, expired, ws)
	}
	var ch [watchFewMax]<-chan struct{} // nil channels never fire
	i := 0
	for c := range ws {
		ch[i] = c
		i++
	}
	select {
	case <-ch[0]:
	case <-ch[1]:
	case <-ch[2]:
	case <-ch[3]:
	case <-ch[4]:
	case <-ch[5]:
	case <-ctx.Done():
		return false
	case <-expired:
		return false
	}
	return true
}

// watchMany is watch for a watch set too large to select on directly.
func watchMany(ctx context.Context, expired <-chan struct{}, ws memdb.WatchSet) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	select {
	case err := <-ws.WatchCh(ctx):
		return err == nil
	case <-expired:
		return false
	}
}

// blockingClient is whom a blocking query counts against per client: the
// IP of the peer it came from, or of the HTTP client it was made for. A
// query another server forwarded was counted where it arrived, and the
// server's own queries are not counted per client.
func blockingClient(opts *structs.QueryOptions) netip.Addr {
	if opts.Forwarded {
		return netip.Addr{}
	}
	peer, _ := rpcx.PeerFromContext(opts.CallContext())
	return peer.IP()
}

// maxIndex returns the highest index of the named tables.
func maxIndex(st *state.StateStore, tables ...string) uint64 {
	var max uint64
	for _, t := range tables {
		if i, err := st.Index(t); err == nil && i > max {
			max = i
		}
	}
	return max
}

// RPC calls an endpoint of this server from inside the process on the
// server's own behalf (workers, joins). See RPCContext.
func (s *Server) RPC(method string, args, reply any) error {
	return s.RPCContext(s.ctx, method, args, reply)
}

// RPCContext calls an endpoint of this server from inside the process (the
// HTTP API, a co-located client, workers). It runs the same endpoint code as
// a remote call, including forwarding to the leader, with the arguments and
// reply copied through the codec (see rpcx.Server.Call), but without a
// network round trip or a share of a multiplexed session's streams. ctx
// ends the call early (a blocking query stops waiting) and may carry an
// rpcx.Peer naming the remote user the call is made for.
func (s *Server) RPCContext(ctx context.Context, method string, args, reply any) error {
	ctx, cancel := context.WithTimeout(ctx, maxQueryTime+time.Minute)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	return s.rpcServer.Call(ctx, method, args, reply)
}
