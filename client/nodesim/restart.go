package nodesim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// The restart policy, applied as the real task runner applies it: up to
// attempts restarts within interval, each after delay plus up to 25%
// jitter; then mode "fail" fails the task and mode "delay" waits for the
// window to end. A successful exit is final for batch jobs and for
// ephemeral lifecycle tasks; everything else is restarted.

type restartDecision int

const (
	decisionDone restartDecision = iota
	decisionRestart
	decisionFail
)

type restartTracker struct {
	policy       *structs.RestartPolicy
	toCompletion bool
	rnd          *rand.Rand // the node's, guarded by its mutex
	count        int
	window       time.Time
	started      bool
}

func newRestartTracker(policy *structs.RestartPolicy, jobType string, task *structs.Task, rnd *rand.Rand) restartTracker {
	if policy == nil {
		policy = structs.DefaultRestartPolicy(jobType)
	}
	batch := jobType == structs.JobTypeBatch || jobType == structs.JobTypeSysBatch
	return restartTracker{policy: policy, toCompletion: !task.IsSidecar() && (task.IsEphemeral() || batch),
		rnd: rnd}
}

func (r *restartTracker) next(now time.Time, res *drivers.ExitResult, startErr error) (restartDecision, time.Duration, string) {
	if startErr != nil && !drivers.IsRecoverable(startErr) {
		return decisionFail, 0, "Error was unrecoverable"
	}
	if startErr == nil && res.Successful() && r.toCompletion {
		return decisionDone, 0, "Restart unnecessary as task terminated successfully"
	}
	if !r.started || now.After(r.window.Add(r.policy.Interval)) {
		r.started, r.window, r.count = true, now, 0
	}
	r.count++
	if r.count > r.policy.Attempts {
		if r.policy.Mode == structs.RestartPolicyModeDelay {
			wait := r.window.Add(r.policy.Interval).Sub(now)
			r.started = false
			return decisionRestart, max(wait, r.policy.Delay), fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is \"delay\"", r.policy.Attempts, r.policy.Interval)
		}
		return decisionFail, 0, fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is \"fail\"", r.policy.Attempts, r.policy.Interval)
	}
	reason := "Restart within policy"
	if startErr != nil {
		reason = "Error was recoverable"
	}
	d := r.policy.Delay
	if d > 0 {
		d += time.Duration(r.rnd.Int64N(int64(d)/4 + 1))
	}
	return decisionRestart, d, reason
}
