package servers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// Transport sends one call to one address; *rpcx.ConnPool is one.
type Transport interface {
	RPC(ctx context.Context, addr, method string, args, reply any) error
}

// ErrNoServers means the list is empty.
var ErrNoServers = errors.New("no servers configured")

// Manager is an RPCer over a list of servers.
type Manager struct {
	transport Transport

	mu         sync.Mutex
	servers    []string
	configured []string
	// moved is closed, and replaced, when the first server (the one
	// calls go to) changes.
	moved chan struct{}
}

// New returns a manager trying servers in the given order.
func New(t Transport, servers []string) *Manager {
	return &Manager{transport: t, servers: append([]string(nil), servers...), configured: append([]string(nil), servers...),
		moved: make(chan struct{})}
}

// Moved returns a channel that closes when calls next go to a server other
// than the one they go to now. State a client keeps on one server (its
// alloc-notice registration) must then be made again on the new one: the
// old server may have been left because it lost touch with the leader,
// and would never tell of a change.
func (m *Manager) Moved() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.moved
}

// setLocked makes list the servers' order, telling Moved's waiters if the
// first one changed. m.mu is held.
func (m *Manager) setLocked(list []string) {
	var was, now string
	if len(m.servers) > 0 {
		was = m.servers[0]
	}
	if len(list) > 0 {
		now = list[0]
	}
	m.servers = list
	if was != now {
		close(m.moved)
		m.moved = make(chan struct{})
	}
}

// Servers returns the current order.
func (m *Manager) Servers() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.servers...)
}

// SetServers adopts the servers a heartbeat named, keeping the configured
// ones at the end as a way back in should all the named ones go away.
func (m *Manager) SetServers(addrs []string) {
	if len(addrs) == 0 {
		return
	}
	seen := map[string]bool{}
	var list []string
	for _, a := range append(append([]string(nil), addrs...), m.configured...) {
		if a != "" && !seen[a] {
			seen[a] = true
			list = append(list, a)
		}
	}
	m.mu.Lock()
	// Keep the server that currently answers first.
	if len(m.servers) > 0 && seen[m.servers[0]] {
		first := m.servers[0]
		for i, a := range list {
			if a == first {
				list[0], list[i] = list[i], list[0]
				break
			}
		}
	}
	m.setLocked(list)
	m.mu.Unlock()
}

// Demote moves addr to the end of the order, as a call it failed (or
// answered without a leader) does: calls go to the others first.
func (m *Manager) Demote(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, a := range m.servers {
		if a == addr {
			m.setLocked(append(append(m.servers[:i:i], m.servers[i+1:]...), addr))
			return
		}
	}
}

// retryElsewhere reports whether another server might do better: a
// transport failure, or a server that has lost touch with the leader (knows
// none, or lost leadership while serving the call).
func retryElsewhere(err error) bool {
	if !rpcx.IsRemoteError(err) {
		return true
	}
	return errors.Is(err, structs.ErrNoLeader) || errors.Is(err, structs.ErrNotLeader)
}

// RPC sends the call to the servers in order until one answers. A handler
// error from a server (other than "no leader") is returned as is: the call
// reached the cluster.
//
// A call whose deadline ran out on a server demotes it too: a server cut
// off from the leader holds a call while it waits for an election (as long
// as a short heartbeat's whole deadline), and one frozen or behind a
// silently dead link never answers. Without the demotion every retry would
// go back to it and a node could miss heartbeats until the servers marked
// it down. A call given up by its caller (canceled) says nothing of the
// server and demotes nothing.
func (m *Manager) RPC(ctx context.Context, method string, args, reply any) error {
	list := m.Servers()
	if len(list) == 0 {
		return ErrNoServers
	}
	var last error
	for _, addr := range list {
		err := m.transport.RPC(ctx, addr, method, args, reply)
		if err == nil || !retryElsewhere(err) {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(cerr, context.DeadlineExceeded) {
				m.Demote(addr)
			}
			return err
		}
		m.Demote(addr)
		last = err
	}
	return fmt.Errorf("no server answered %s (tried %d): %w", method, len(list), last)
}
