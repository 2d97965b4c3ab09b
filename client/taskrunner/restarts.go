package taskrunner

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// restartDecision is what the tracker says to do after a task ended.
type restartDecision int

const (
	// decisionDone: the task completed successfully and is not restarted.
	decisionDone restartDecision = iota
	// decisionRestart: start the task again after the returned delay.
	decisionRestart
	// decisionFail: the restart policy is exhausted; the task failed.
	decisionFail
)

// restartTracker applies a `restart` block. Restarts are counted within a
// window of `interval` that opens at the first failure; within it up to
// `attempts` restarts happen, each after `delay` (plus up to 25% jitter so
// a fleet of crashing tasks does not restart in lockstep). When the attempts
// are used up, mode "fail" fails the task and mode "delay" waits for the
// window to end and starts counting again.
//
// It is owned by one task runner goroutine.
type restartTracker struct {
	policy *structs.RestartPolicy
	// toCompletion: a successful exit is final (batch jobs' tasks, and
	// lifecycle tasks that are not sidecars); otherwise every exit is
	// restarted. Sidecars are restarted even in a batch job, as in Nomad:
	// they serve the main tasks for as long as those run.
	toCompletion bool
	rnd          *rand.Rand
	count        int
	window       time.Time // start of the current interval
	started      bool
}

func newRestartTracker(policy *structs.RestartPolicy, jobType string, task *structs.Task, seed int64) *restartTracker {
	if policy == nil {
		policy = structs.DefaultRestartPolicy(jobType)
	}
	batch := jobType == structs.JobTypeBatch || jobType == structs.JobTypeSysBatch
	return &restartTracker{
		policy:       policy,
		toCompletion: !task.IsSidecar() && (task.IsEphemeral() || batch),
		rnd:          rand.New(rand.NewSource(seed)),
	}
}

// next decides what follows an exit (res) or a failed start (startErr).
// It returns the delay before the restart and the reason shown in events.
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
			// The next failure opens a new window.
			r.started = false
			return decisionRestart, max(wait, r.policy.Delay), fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is \"delay\"", r.policy.Attempts, r.policy.Interval)
		}
		return decisionFail, 0, fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is \"fail\"", r.policy.Attempts, r.policy.Interval)
	}
	reason := "Restart within policy"
	if startErr != nil {
		reason = "Error was recoverable"
	}
	return decisionRestart, r.jittered(r.policy.Delay), reason
}

func (r *restartTracker) jittered(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d + time.Duration(r.rnd.Int63n(int64(d)/4+1))
}
