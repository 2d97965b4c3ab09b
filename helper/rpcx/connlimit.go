package rpcx

import (
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
)

// connLimiter counts open connections, per client IP and in total, and
// refuses those past either limit, so neither one host nor many together
// can hold every file descriptor of the process (the HTTP API, raft and the
// data files need theirs). Refusals are logged at most once a minute per
// IP, and those for the total once a minute: an attacker must not be able
// to flood the log either.
type connLimiter struct {
	limit  int
	max    int
	logger hclog.Logger

	mu          sync.Mutex
	total       int
	open        map[netip.Addr]int
	logged      map[netip.Addr]time.Time
	loggedTotal time.Time
}

func newConnLimiter(limit, max int, logger hclog.Logger) *connLimiter {
	return &connLimiter{limit: limit, max: max, logger: logger, open: map[netip.Addr]int{}, logged: map[netip.Addr]time.Time{}}
}

// admit counts a new connection from addr. It returns false when addr's IP
// already has the limit open; otherwise release must be called once when
// the connection closes.
func (l *connLimiter) admit(addr net.Addr) (release func(), ok bool) {
	ip := Peer{Addr: addr}.IP()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.max {
		if now := time.Now(); now.Sub(l.loggedTotal) >= time.Minute {
			l.loggedTotal = now
			l.logger.Warn("refusing connection: the server has as many open as it allows (limits.rpc_max_conns)",
				"client", ip, "limit", l.max)
		}
		return nil, false
	}
	if ip.IsValid() && l.open[ip] >= l.limit {
		now := time.Now()
		if last, seen := l.logged[ip]; !seen || now.Sub(last) >= time.Minute {
			l.logged[ip] = now
			l.logger.Warn("refusing connection: client has too many open (limits.rpc_max_conns_per_client)",
				"client", ip, "limit", l.limit)
		}
		return nil, false
	}
	l.total++
	if ip.IsValid() {
		l.open[ip]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if !ip.IsValid() {
				return
			}
			if l.open[ip]--; l.open[ip] <= 0 {
				delete(l.open, ip)
				delete(l.logged, ip)
			}
		})
	}, true
}

// limitedConn gives its slot back when closed.
type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

// DefaultMaxConns is the total connection limit when none is set: half
// the process's file descriptor limit (the soft limit, which Go raises to
// the hard limit at start), leaving the rest to the HTTP API, raft, and
// the data files; at least 1,024.
func DefaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return 1024
	}
	return int(max(min(rl.Cur/2, 1<<20), 1024))
}
