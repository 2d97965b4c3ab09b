package agent

import (
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// connLimitLogInterval is how often at most the limiter logs refusals of
// one remote address: a client hammering the port must not flood the log.
const connLimitLogInterval = time.Minute

// connLimiter enforces limits.http_max_conns_per_client on the HTTP
// listener: each remote IP may hold at most max connections; one more is
// closed as soon as the server sees it, before a byte of it is read. It
// hooks into http.Server.ConnState, so it sees exactly the connections the
// server serves (TLS ones included, by their remote address) and frees a
// slot when a connection closes or is hijacked.
type connLimiter struct {
	max    func() int
	logger hclog.Logger
	now    func() time.Time

	mu      sync.Mutex
	perIP   map[string]int
	conns   map[net.Conn]string
	lastLog map[string]time.Time
}

func newConnLimiter(max func() int, logger hclog.Logger) *connLimiter {
	return &connLimiter{max: max, logger: logger, now: time.Now,
		perIP: map[string]int{}, conns: map[net.Conn]string{}, lastLog: map[string]time.Time{}}
}

// connState is the http.Server ConnState hook.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		if !l.admit(c) {
			c.Close()
		}
	case http.StateClosed, http.StateHijacked:
		l.release(c)
	}
}

func (l *connLimiter) admit(c net.Conn) bool {
	ip := remoteIP(c.RemoteAddr())
	max := l.max()
	l.mu.Lock()
	defer l.mu.Unlock()
	if max > 0 && l.perIP[ip] >= max {
		l.logRefusal(ip, max)
		return false
	}
	l.perIP[ip]++
	l.conns[c] = ip
	return true
}

func (l *connLimiter) release(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ip, ok := l.conns[c]
	if !ok {
		return
	}
	delete(l.conns, c)
	if l.perIP[ip]--; l.perIP[ip] <= 0 {
		delete(l.perIP, ip)
	}
}

// logRefusal logs a refusal unless ip was logged within the interval;
// entries older than that are dropped, so the map holds only addresses
// refused recently. Called with mu held.
func (l *connLimiter) logRefusal(ip string, max int) {
	now := l.now()
	if last, ok := l.lastLog[ip]; ok && now.Sub(last) < connLimitLogInterval {
		return
	}
	for k, t := range l.lastLog {
		if now.Sub(t) >= connLimitLogInterval {
			delete(l.lastLog, k)
		}
	}
	l.lastLog[ip] = now
	l.logger.Warn("closing HTTP connection: too many from one address (limits.http_max_conns_per_client); further refusals of it are not logged for a minute",
		"remote_ip", ip, "limit", max)
}

func (l *connLimiter) open(ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.perIP[ip]
}

// remoteIP is the address part of a connection's remote address.
func remoteIP(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
