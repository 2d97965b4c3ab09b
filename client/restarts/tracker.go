package restarts

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// Decision is what the tracker says to do after a task ended.
type Decision int

const (
	// Done: the task completed successfully and is not restarted.
	Done Decision = iota
	// Restart: start the task again after the returned delay.
	Restart
	// Fail: the restart policy is exhausted (or the error unrecoverable);
	// the task failed.
	Fail
)

// Jitter returns a number in [0, n): the random part of a restart delay.
// The caller owns its source (a *rand.Rand's Int63n or Int64N).
type Jitter func(n int64) int64

// Tracker applies a `restart` block. Restarts are counted within a window
// of `interval` that opens at the first failure; within it up to
// `attempts` restarts happen, each after `delay` (plus up to 25% jitter so
// a fleet of crashing tasks does not restart in lockstep). When the
// attempts are used up, mode "fail" fails the task and mode "delay" waits
// for the window to end and starts counting again.
//
// A Tracker is owned by one goroutine (or guarded by its owner's lock).
type Tracker struct {
	policy *structs.RestartPolicy
	// toCompletion: a successful exit is final (batch jobs' tasks, and
	// lifecycle tasks that are not sidecars); otherwise every exit is
	// restarted. Sidecars are restarted even in a batch job, as in Nomad:
	// they serve the main tasks for as long as those run.
	toCompletion bool
	jitter       Jitter
	count        int
	window       time.Time // start of the current interval
	started      bool
}

// New returns a tracker for task of a job of jobType under policy (the
// job type's default when nil).
func New(policy *structs.RestartPolicy, jobType string, task *structs.Task, jitter Jitter) Tracker {
	if policy == nil {
		policy = structs.DefaultRestartPolicy(jobType)
	}
	batch := jobType == structs.JobTypeBatch || jobType == structs.JobTypeSysBatch
	return Tracker{
		policy:       policy,
		toCompletion: !task.IsSidecar() && (task.IsEphemeral() || batch),
		jitter:       jitter,
	}
}

// Next decides what follows an exit (res) or a failed start (startErr) at
// now. It returns the delay before the restart and the reason shown in
// task events (Nomad's wording).
func (r *Tracker) Next(now time.Time, res *drivers.ExitResult, startErr error) (Decision, time.Duration, string) {
	if startErr != nil && !drivers.IsRecoverable(startErr) {
		return Fail, 0, "Error was unrecoverable"
	}
	if startErr == nil && res.Successful() && r.toCompletion {
		return Done, 0, "Restart unnecessary as task terminated successfully"
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
			return Restart, max(wait, r.policy.Delay), fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is \"delay\"", r.policy.Attempts, r.policy.Interval)
		}
		return Fail, 0, fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is \"fail\"", r.policy.Attempts, r.policy.Interval)
	}
	reason := "Restart within policy"
	if startErr != nil {
		reason = "Error was recoverable"
	}
	return Restart, r.jittered(r.policy.Delay), reason
}

func (r *Tracker) jittered(d time.Duration) time.Duration {
	if d <= 0 || r.jitter == nil {
		return max(d, 0)
	}
	return d + time.Duration(r.jitter(int64(d)/4+1))
}
