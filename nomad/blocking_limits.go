package nomad

import (
	"fmt"
	"net/netip"
	"sync"

	"github.com/drover-sched/drover/structs"
)

// Default blocking-query limits. A waiting query costs a goroutine and a
// watch set (tens of KiB at most); the total default keeps that well under
// a gigabyte while leaving room for one long poll per client node of a
// large cluster (each node holds one for its assignment).
const (
	DefaultMaxBlockingQueries          = 16384
	DefaultMaxBlockingQueriesPerClient = 256
)

// ErrTooManyBlockingQueries refuses a blocking query past a limit. The HTTP
// API answers it with 429 Too Many Requests.
var ErrTooManyBlockingQueries = structs.NewCodedError("TooManyBlockingQueries", "too many blocking queries")

// blockingLimiter counts the blocking queries waiting on this server, in
// total and per client IP. A query is counted from when it starts waiting
// until it answers, so a client that holds many open at once (whether
// deliberately or through a bug) is refused past its share while the rest
// of the cluster is served.
type blockingLimiter struct {
	max, perClient int

	mu       sync.Mutex
	total    int
	byClient map[netip.Addr]int
}

func newBlockingLimiter(max, perClient int) *blockingLimiter {
	if max <= 0 {
		max = DefaultMaxBlockingQueries
	}
	if perClient <= 0 {
		perClient = DefaultMaxBlockingQueriesPerClient
	}
	return &blockingLimiter{max: max, perClient: perClient, byClient: map[netip.Addr]int{}}
}

// acquire counts one waiting query for client (the invalid Addr for one
// that is not counted per client: the server's own work, and queries
// another server forwarded, which were counted where they arrived). It
// returns the function that ends the count, or an error naming the limit
// that was reached.
func (l *blockingLimiter) acquire(client netip.Addr) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= l.max {
		return nil, fmt.Errorf("%w: this server already holds %d (limits.max_blocking_queries = %d); retry later",
			ErrTooManyBlockingQueries, l.total, l.max)
	}
	if client.IsValid() && l.byClient[client] >= l.perClient {
		return nil, fmt.Errorf("%w from %s: %d are waiting (limits.max_blocking_queries_per_client = %d); retry later",
			ErrTooManyBlockingQueries, client, l.byClient[client], l.perClient)
	}
	l.total++
	if client.IsValid() {
		l.byClient[client]++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.total--
			if client.IsValid() {
				if l.byClient[client]--; l.byClient[client] <= 0 {
					delete(l.byClient, client)
				}
			}
		})
	}, nil
}

// waiting reports the queries counted now, in total and for client.
func (l *blockingLimiter) waiting(client netip.Addr) (int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.byClient[client]
}

// BlockingQueries reports how many blocking queries are waiting on this
// server now.
func (s *Server) BlockingQueries() int {
	total, _ := s.blockingLimits.waiting(netip.Addr{})
	return total
}
