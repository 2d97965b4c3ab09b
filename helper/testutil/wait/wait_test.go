package wait

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what a wait reports instead of
// failing the test that checks the wait.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestForReturnsAtOnceWhenTheConditionHolds(t *testing.T) {
	t.Parallel()
	calls := 0
	r := &recorder{TB: t}
	start := time.Now()
	For(r, time.Hour, func() (bool, string) { calls++; return true, "" }, Every(time.Hour))
	if r.failed != "" || calls != 1 {
		t.Fatalf("failed %q after %d calls, want no failure after 1 call", r.failed, calls)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("took %s for a condition that already held", d)
	}
}

func TestUntilStepsBetweenChecksUntilTheConditionHolds(t *testing.T) {
	t.Parallel()
	checks, steps := 0, 0
	r := &recorder{TB: t}
	Until(r, time.Minute, "the third check", func() bool { checks++; return checks == 3 },
		Every(time.Millisecond), Stepping(func() { steps++ }))
	if r.failed != "" {
		t.Fatalf("failed: %s", r.failed)
	}
	if checks != 3 || steps != 2 {
		t.Fatalf("checks %d, steps %d; want 3 checks with a step between each", checks, steps)
	}
}

func TestForFailsWithTheLastReasonAfterTheTimeout(t *testing.T) {
	t.Parallel()
	n := 0
	r := &recorder{TB: t}
	start := time.Now()
	For(r, 50*time.Millisecond, func() (bool, string) { n++; return false, fmt.Sprintf("check %d", n) },
		Every(time.Millisecond))
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %s, before the 50ms timeout", d)
	}
	want := fmt.Sprintf("condition not met after 50ms: check %d", n)
	if r.failed != want {
		t.Fatalf("failure %q, want %q", r.failed, want)
	}
}

func TestUntilNamesWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	r := &recorder{TB: t}
	Until(r, 10*time.Millisecond, "the leader", func() bool { return false })
	if r.failed != "timed out waiting for the leader" {
		t.Fatalf("failure %q", r.failed)
	}
}

// A long interval must not stretch the wait past its timeout.
func TestTheTimeoutWinsOverALongInterval(t *testing.T) {
	t.Parallel()
	start := time.Now()
	checks := 0
	if Holds(20*time.Millisecond, func() bool { checks++; return false }, Every(time.Hour)) {
		t.Fatal("Holds reported a condition that never held")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("waited %s for a 20ms timeout", d)
	}
	if checks != 2 {
		t.Fatalf("%d checks, want one at the start and one at the timeout", checks)
	}
}

func TestHoldsReportsAConditionThatBecomesTrue(t *testing.T) {
	t.Parallel()
	deadline := time.Now().Add(20 * time.Millisecond)
	if !Holds(time.Minute, func() bool { return time.Now().After(deadline) }, Every(time.Millisecond)) {
		t.Fatal("Holds missed a condition that became true")
	}
	ok, why := Poll(time.Minute, func() (bool, string) { return true, "done" })
	if !ok || !strings.Contains(why, "done") {
		t.Fatalf("Poll = %v, %q", ok, why)
	}
}
