package nomad

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad/raftlog"
)

// Raft trusts whoever speaks it. With mutual TLS and
// verify_server_hostname only servers may (peer_auth.go); without them
// anyone who reaches the RPC port can claim to be the leader. Such a
// caller can rewrite the log, which nothing can prevent without TLS, but
// it must not be able to kill the server, now or at every start: the FSM
// refuses entries it cannot apply (nomad/fsm), and raft itself panics on two
// kinds of entry no leader sends:
//
//   - a configuration entry (LogConfiguration) whose data does not decode,
//     and raft's old-protocol peer changes, which raft decodes as it
//     stores them and again when it starts;
//   - entries that do not follow the entry the request names as previous
//     (PrevLogEntry): with PrevLogEntry 0 raft stores them wherever they
//     say, leaving a gap it panics on when it applies or starts.
//
// The first kind is a matter of the entry alone, and raftlog.Vet tells
// it; the second is a matter of the request, checked here.
//
// vettedTransport refuses such requests before raft reads them, answering
// the caller with an error, and checkRaftLog stops a server whose log
// already holds one (written before this check existed) with an error
// that names the file and the entry, instead of a panic inside raft.

// vettedTransport is a NetworkTransport whose consumer sees only requests
// a raft leader could have sent. Heartbeats (no entries) take the
// transport's fast path unchanged.
//
// Ownership: the transport owns one goroutine, started by
// newVettedTransport, that moves requests from the network to raft's
// consumer; Close stops it and waits for it.
type vettedTransport struct {
	*raft.NetworkTransport
	logger  hclog.Logger
	out     chan raft.RPC
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	refused refusalLimiter
}

func newVettedTransport(t *raft.NetworkTransport, logger hclog.Logger) *vettedTransport {
	v := &vettedTransport{
		NetworkTransport: t,
		logger:           logger,
		out:              make(chan raft.RPC),
		stop:             make(chan struct{}),
		done:             make(chan struct{}),
	}
	go v.run()
	return v
}

// Consumer is what raft reads requests from.
func (v *vettedTransport) Consumer() <-chan raft.RPC { return v.out }

// Close stops the transport and the goroutine that vets its requests.
func (v *vettedTransport) Close() error {
	v.once.Do(func() { close(v.stop) })
	err := v.NetworkTransport.Close()
	<-v.done
	return err
}

func (v *vettedTransport) run() {
	defer close(v.done)
	in := v.NetworkTransport.Consumer()
	for {
		select {
		case <-v.stop:
			return
		case rpc := <-in:
			if err := vetRaftRequest(rpc.Command); err != nil {
				if n, ok := v.refused.allow(time.Now()); ok {
					v.logger.Warn("refused a raft request no leader sends; is a process without a server certificate speaking raft to this server's RPC port? (tls.rpc with verify_server_hostname lets only servers)",
						"error", err, "refused_since_last_log", n)
				}
				rpc.Respond(nil, err)
				continue
			}
			select {
			case v.out <- rpc:
			case <-v.stop:
				rpc.Respond(nil, raft.ErrTransportShutdown)
				return
			}
		}
	}
}

// errRaftRequestRefused marks a raft request vettedTransport refused.
var errRaftRequestRefused = errors.New("raft request refused")

// vetRaftRequest returns why a request from a would-be leader is one no
// raft leader sends, or nil.
func vetRaftRequest(cmd any) error {
	switch req := cmd.(type) {
	case *raft.AppendEntriesRequest:
		next := req.PrevLogEntry + 1
		for _, e := range req.Entries {
			if e == nil {
				return fmt.Errorf("%w: an empty entry", errRaftRequestRefused)
			}
			if e.Index != next {
				return fmt.Errorf("%w: entry index %d does not follow index %d (a leader sends entries in order after PrevLogEntry)",
					errRaftRequestRefused, e.Index, next-1)
			}
			next++
			if err := raftlog.Vet(e); err != nil {
				return fmt.Errorf("%w: %w", errRaftRequestRefused, err)
			}
		}
	case *raft.InstallSnapshotRequest:
		if req.SnapshotVersion > 0 {
			if err := raftlog.VetConfiguration(req.Configuration); err != nil {
				return fmt.Errorf("%w: snapshot at index %d: %w", errRaftRequestRefused, req.LastLogIndex, err)
			}
		}
	}
	return nil
}

// refusalLimiter lets a refusal be logged at most once a minute, so a
// caller repeating forged requests cannot flood the log; it counts the
// refusals in between.
type refusalLimiter struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func (l *refusalLimiter) allow(now time.Time) (suppressed int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < time.Minute {
		l.suppressed++
		return 0, false
	}
	n := l.suppressed
	l.last, l.suppressed = now, 0
	return n, true
}

// checkRaftLog reads every entry raft reads when it starts (those after
// the newest snapshot) and returns why raft would panic on them, or nil:
// a missing entry, or one raftlog.Vet refuses.
func checkRaftLog(logs raft.LogStore, snaps raft.SnapshotStore) error {
	first, err := logs.FirstIndex()
	if err != nil {
		return err
	}
	last, err := logs.LastIndex()
	if err != nil {
		return err
	}
	if last == 0 {
		return nil
	}
	metas, err := snaps.List()
	if err != nil {
		return err
	}
	start := first
	if len(metas) > 0 && metas[0].Index+1 > start {
		start = metas[0].Index + 1
	}
	for i := start; i <= last; i++ {
		var e raft.Log
		if err := logs.GetLog(i, &e); errors.Is(err, raft.ErrLogNotFound) {
			return fmt.Errorf("entry %d is missing from the log, which holds entries up to %d", i, last)
		} else if err != nil {
			return fmt.Errorf("entry %d of the log cannot be read: %v", i, err)
		}
		if err := raftlog.Vet(&e); err != nil {
			return err
		}
	}
	return nil
}

// poisonedRaftDB says what to do about a log that holds an entry no raft
// leader writes.
func poisonedRaftDB(path string, err error) error {
	return fmt.Errorf("raft: the log store %s holds an entry raft cannot start from: %v. No Drover server writes such an entry; "+
		"a process that reached the RPC port without a server certificate likely did (turn on tls.rpc with verify_server_hostname). "+
		"Move the server's raft directory aside and start the server again to rejoin the cluster and catch up from its peers, "+
		"or, for a single server, restore the data dir from a backup", path, err)
}
