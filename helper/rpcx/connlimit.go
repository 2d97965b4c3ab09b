package rpcx

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// connLimiter counts open connections per client IP and refuses those past
// the limit, so one host cannot hold every file descriptor of the server.
// Refusals are logged at most once a minute per IP: an attacker must not be
// able to flood the log either.
type connLimiter struct {
	limit  int
	logger hclog.Logger

	mu     sync.Mutex
	open   map[netip.Addr]int
	logged map[netip.Addr]time.Time
}

func newConnLimiter(limit int, logger hclog.Logger) *connLimiter {
	return &connLimiter{limit: limit, logger: logger, open: map[netip.Addr]int{}, logged: map[netip.Addr]time.Time{}}
}

// admit counts a new connection from addr. It returns false when addr's IP
// already has the limit open; otherwise release must be called once when
// the connection closes.
func (l *connLimiter) admit(addr net.Addr) (release func(), ok bool) {
	ip := Peer{Addr: addr}.IP()
	if !ip.IsValid() {
		return func() {}, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[ip] >= l.limit {
		now := time.Now()
		if last, seen := l.logged[ip]; !seen || now.Sub(last) >= time.Minute {
			l.logged[ip] = now
			l.logger.Warn("refusing connection: client has too many open (limits.rpc_max_conns_per_client)",
				"client", ip, "limit", l.limit)
		}
		return nil, false
	}
	l.open[ip]++
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
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
