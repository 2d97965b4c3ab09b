package testutil

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
)

// DefaultWait is how long WaitFor waits for a condition. Generous, because
// CI runs the race detector on two cores.
const DefaultWait = 20 * time.Second

// WaitFor checks cond until it is true, failing the test with msg if it is
// still false after DefaultWait. It is for conditions another goroutine or
// process makes true; it is not a sleep: it returns as soon as cond holds.
func WaitFor(t testing.TB, msg string, cond func() bool) {
	t.Helper()
	WaitForWhile(t, msg, cond, nil)
}

// WaitForWhile is WaitFor that also calls step (if not nil) between checks,
// for example to advance a fake clock until a loop reaches its goal.
func WaitForWhile(t testing.TB, msg string, cond func() bool, step func()) {
	t.Helper()
	if !wait.Holds(DefaultWait, cond, wait.Every(2*time.Millisecond), wait.Stepping(step)) {
		t.Fatalf("timed out waiting: %s", msg)
	}
}
