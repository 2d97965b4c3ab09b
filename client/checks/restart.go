package checks

import (
	"time"

	"github.com/drover-sched/drover/structs"
)

// restartTracker applies one check's check_restart block: after grace
// (from when the check started, and again from each restart it asked for)
// it counts consecutive unhealthy results, and asks for a restart of the
// task when the count reaches limit. A passing result starts the count
// again; with ignore_warnings a warning does too.
type restartTracker struct {
	limit          int
	grace          time.Duration
	ignoreWarnings bool
	graceUntil     time.Time
	failures       int
}

func newRestartTracker(cr *structs.CheckRestart, now time.Time) *restartTracker {
	if cr == nil || cr.Limit <= 0 {
		return nil
	}
	return &restartTracker{limit: cr.Limit, grace: cr.Grace, ignoreWarnings: cr.IgnoreWarnings, graceUntil: now.Add(cr.Grace)}
}

// observe counts a result at now and reports whether the task is to be
// restarted. A nil tracker never restarts.
func (t *restartTracker) observe(now time.Time, status string) bool {
	if t == nil {
		return false
	}
	healthy := status == StatusSuccess || (status == StatusWarning && t.ignoreWarnings) || status == StatusPending
	if healthy {
		t.failures = 0
		return false
	}
	if now.Before(t.graceUntil) {
		return false
	}
	t.failures++
	if t.failures < t.limit {
		return false
	}
	t.failures = 0
	t.graceUntil = now.Add(t.grace)
	return true
}
