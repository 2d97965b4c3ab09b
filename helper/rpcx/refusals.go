package rpcx

import (
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// refusalLog logs refused connections at most once per interval per
// client IP, so a peer that keeps knocking (plaintext on a TLS port, a
// stranger's certificate) cannot flood the log. It remembers a bounded
// number of IPs: past that it forgets them all and starts again, which
// at worst logs a few lines more.
type refusalLog struct {
	logger   hclog.Logger
	interval time.Duration
	now      func() time.Time

	mu     sync.Mutex
	logged map[netip.Addr]time.Time
}

// maxRefusalIPs bounds the IPs refusalLog remembers.
const maxRefusalIPs = 4096

func newRefusalLog(logger hclog.Logger) *refusalLog {
	return &refusalLog{logger: logger, interval: time.Minute, now: time.Now, logged: map[netip.Addr]time.Time{}}
}

// warn logs msg with args for the peer at addr unless that peer was
// logged within the interval.
func (r *refusalLog) warn(addr net.Addr, msg string, args ...any) {
	ip := Peer{Addr: addr}.IP()
	now := r.now()
	r.mu.Lock()
	last, seen := r.logged[ip]
	if seen && now.Sub(last) < r.interval {
		r.mu.Unlock()
		return
	}
	if len(r.logged) >= maxRefusalIPs {
		clear(r.logged)
	}
	r.logged[ip] = now
	r.mu.Unlock()
	r.logger.Warn(msg, append([]any{"remote", addr, "next_log_after", r.interval}, args...)...)
}
