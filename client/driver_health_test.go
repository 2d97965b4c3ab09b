package client

import (
	"testing"
	"time"
)

// An unhealthy driver is asked again soon, then less often, never less
// often than the healthy period; a healthy one at the period.
func TestNextDriverCheckBacksOffWhileUnhealthy(t *testing.T) {
	var retry time.Duration
	var got []time.Duration
	for range 7 {
		retry = nextDriverRetry(retry, false)
		got = append(got, retry)
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("waits while unhealthy = %v, want %v", got, want)
		}
	}
	if r := nextDriverRetry(4*time.Second, true); r != 0 {
		t.Fatalf("retry once healthy = %v, want 0 (the period)", r)
	}
}
