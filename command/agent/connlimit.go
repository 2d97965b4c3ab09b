package agent

import (
	"fmt"
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
// listener: each remote IP may hold at most max connections. It hooks into
// http.Server.ConnState, so it sees exactly the connections the server
// serves (TLS ones included, by their remote address) and frees a slot when
// a connection closes or is hijacked.
//
// What the limit bounds is work and descriptors, not politeness about
// keep-alive: a client that makes a fresh HTTP client (and so a fresh
// pool of idle keep-alive connections) for every request would otherwise
// run into the limit with no request in progress at all. So a connection
// over the limit first takes the slot of one of that address's idle
// connections, which is closed (a client retries a request that finds its
// idle connection closed). Only when every one of the address's
// connections is busy is the new one refused: it is answered 429 Too Many
// Requests, naming the setting, and closed.
type connLimiter struct {
	// max bounds one address's connections, total everyone's together
	// (limits.http_max_conns, which bounds the descriptors the HTTP port
	// may take from the rest of the agent); the same rule applies to the
	// total: an idle connection of anyone's gives way first.
	max    func() int
	total  func() int
	logger hclog.Logger
	now    func() time.Time

	mu      sync.Mutex
	perIP   map[string]map[net.Conn]bool // connection -> idle
	conns   map[net.Conn]string
	lastLog map[string]time.Time
}

func newConnLimiter(max, total func() int, logger hclog.Logger) *connLimiter {
	return &connLimiter{max: max, total: total, logger: logger, now: time.Now,
		perIP: map[string]map[net.Conn]bool{}, conns: map[net.Conn]string{}, lastLog: map[string]time.Time{}}
}

// connState is the http.Server ConnState hook.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		evicted, ok := l.admit(c)
		if evicted != nil {
			evicted.Close()
		}
		if !ok {
			refuse(c)
		}
	case http.StateIdle, http.StateActive:
		l.setIdle(c, state == http.StateIdle)
	case http.StateClosed, http.StateHijacked:
		l.release(c)
	}
}

// refusedBody is the whole answer to a connection over the limit.
const refusedBody = "too many connections busy (limits.http_max_conns_per_client, limits.http_max_conns); close idle connections or retry later"

// refuse answers a connection over the limit and closes it. The answer is
// written without reading the request, within a short deadline, so a
// client that never reads cannot hold the goroutine.
func refuse(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		len(refusedBody), refusedBody)
	c.Close()
}

// admit counts a new connection. Over the limit it takes an idle
// connection's slot, returning that connection for the caller to close,
// or reports false when every connection of the address is busy.
func (l *connLimiter) admit(c net.Conn) (evicted net.Conn, ok bool) {
	ip := remoteIP(c.RemoteAddr())
	max, total := l.max(), l.total()
	l.mu.Lock()
	defer l.mu.Unlock()
	mine := l.perIP[ip]
	overIP := max > 0 && len(mine) >= max
	overTotal := total > 0 && len(l.conns) >= total
	if overIP || overTotal {
		evicted = idleIn(mine)
		if evicted == nil && !overIP {
			for _, conns := range l.perIP {
				if evicted = idleIn(conns); evicted != nil {
					break
				}
			}
		}
		if evicted == nil {
			if overIP {
				l.logRefusal(ip, "limits.http_max_conns_per_client", max)
			} else {
				l.logRefusal(ip, "limits.http_max_conns", total)
			}
			return nil, false
		}
		l.forget(evicted)
		mine = l.perIP[ip]
	}
	if mine == nil {
		mine = map[net.Conn]bool{}
		l.perIP[ip] = mine
	}
	mine[c] = false
	l.conns[c] = ip
	return evicted, true
}

// idleIn returns one idle connection of conns, nil if none is.
func idleIn(conns map[net.Conn]bool) net.Conn {
	for c, idle := range conns {
		if idle {
			return c
		}
	}
	return nil
}

func (l *connLimiter) setIdle(c net.Conn, idle bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ip, ok := l.conns[c]; ok {
		l.perIP[ip][c] = idle
	}
}

func (l *connLimiter) release(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forget(c)
}

// forget drops c's slot. Called with mu held.
func (l *connLimiter) forget(c net.Conn) {
	ip, ok := l.conns[c]
	if !ok {
		return
	}
	delete(l.conns, c)
	delete(l.perIP[ip], c)
	if len(l.perIP[ip]) == 0 {
		delete(l.perIP, ip)
	}
}

// logRefusal logs a refusal unless ip was logged within the interval;
// entries older than that are dropped, so the map holds only addresses
// refused recently. Called with mu held.
func (l *connLimiter) logRefusal(ip, setting string, max int) {
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
	l.logger.Warn("refusing HTTP connection: every connection it may take is busy; further refusals of this address are not logged for a minute",
		"remote_ip", ip, "setting", setting, "limit", max)
}

func (l *connLimiter) open(ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.perIP[ip])
}

func (l *connLimiter) idle(ip string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, idle := range l.perIP[ip] {
		if idle {
			n++
		}
	}
	return n
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
