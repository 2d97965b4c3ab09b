package client

import (
	"math/rand"
	"sync"
	"time"
)

// jitter is a mutex-guarded random source for backoffs and heartbeat
// spacing, seeded per client so that a fleet does not retry in step.
type jitter struct {
	mu  sync.Mutex
	rnd *rand.Rand
}

func newJitter(seed int64) *jitter { return &jitter{rnd: rand.New(rand.NewSource(seed))} }

// backoff returns an exponential delay for the attempt-th consecutive
// failure (0-based), capped at max, with "equal jitter": between half and
// all of it, so retries spread out but never hammer.
func (j *jitter) backoff(attempt int, base, max time.Duration) time.Duration {
	d := base
	for i := 0; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	half := d / 2
	return half + time.Duration(j.rnd.Int63n(int64(half)+1))
}

// heartbeatDelay is when to heartbeat next given the server's TTL: half of
// it, minus up to a tenth, so a heartbeat lands well before the deadline
// even after a slow round trip, and nodes registered together spread out.
func (j *jitter) heartbeatDelay(ttl time.Duration) time.Duration {
	half := ttl / 2
	j.mu.Lock()
	defer j.mu.Unlock()
	return half - time.Duration(j.rnd.Int63n(int64(ttl/10)+1))
}

// lease is how long a registration for alloc notices stands before the
// client registers again (Nomad's blocking-query wait with its jitter):
// wait plus up to a sixteenth, so a fleet does not re-register in step.
func (j *jitter) lease(wait time.Duration) time.Duration {
	j.mu.Lock()
	defer j.mu.Unlock()
	return wait + time.Duration(j.rnd.Int63n(int64(wait/16)+1))
}
