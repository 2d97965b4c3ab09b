package client

import (
	"testing"
	"time"
)

// A heartbeat waits no longer than the TTL the servers gave (an answer
// after that is worth nothing), but never less than 5 s on a busy server
// nor more than any other call.
func TestHeartbeatTimeoutFollowsTheTTLWithinBounds(t *testing.T) {
	for ttl, want := range map[time.Duration]time.Duration{
		0:                5 * time.Second,
		2 * time.Second:  5 * time.Second,
		12 * time.Second: 12 * time.Second,
		time.Hour:        callTimeout,
	} {
		if got := heartbeatTimeout(ttl); got != want {
			t.Errorf("TTL %v: timeout %v, want %v", ttl, got, want)
		}
	}
}
