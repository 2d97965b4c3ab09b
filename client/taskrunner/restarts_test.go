package taskrunner

import (
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

func TestRestartTracker(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := &drivers.ExitResult{ExitCode: 1}
	ok := &drivers.ExitResult{}
	policy := &structs.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: 10 * time.Second, Mode: structs.RestartPolicyModeFail}

	t.Run("attempts within the interval, then failed", func(t *testing.T) {
		r := newRestartTracker(policy, structs.JobTypeService, false, 1)
		for i := 0; i < 2; i++ {
			d, delay, _ := r.next(t0.Add(time.Duration(i)*time.Second), fail, nil)
			if d != decisionRestart || delay < 10*time.Second || delay > 12500*time.Millisecond {
				t.Fatalf("attempt %d: %v %v", i, d, delay)
			}
		}
		if d, _, _ := r.next(t0.Add(3*time.Second), fail, nil); d != decisionFail {
			t.Fatalf("third failure: %v", d)
		}
	})
	t.Run("a failure after the interval opens a new window", func(t *testing.T) {
		r := newRestartTracker(policy, structs.JobTypeService, false, 1)
		r.next(t0, fail, nil)
		r.next(t0.Add(time.Second), fail, nil)
		if d, _, _ := r.next(t0.Add(2*time.Minute), fail, nil); d != decisionRestart {
			t.Fatalf("got %v", d)
		}
	})
	t.Run("delay mode waits out the interval", func(t *testing.T) {
		p := *policy
		p.Mode = structs.RestartPolicyModeDelay
		r := newRestartTracker(&p, structs.JobTypeService, false, 1)
		r.next(t0, fail, nil)
		r.next(t0.Add(time.Second), fail, nil)
		d, delay, _ := r.next(t0.Add(20*time.Second), fail, nil)
		if d != decisionRestart || delay != 40*time.Second {
			t.Fatalf("got %v %v", d, delay)
		}
	})
	t.Run("a batch task that exits 0 is done", func(t *testing.T) {
		r := newRestartTracker(policy, structs.JobTypeBatch, false, 1)
		if d, _, _ := r.next(t0, ok, nil); d != decisionDone {
			t.Fatalf("got %v", d)
		}
	})
	t.Run("a service task that exits 0 is restarted", func(t *testing.T) {
		r := newRestartTracker(policy, structs.JobTypeService, false, 1)
		if d, _, _ := r.next(t0, ok, nil); d != decisionRestart {
			t.Fatalf("got %v", d)
		}
	})
	t.Run("a service job's ephemeral lifecycle task that exits 0 is done, one that fails is restarted", func(t *testing.T) {
		r := newRestartTracker(policy, structs.JobTypeService, true, 1)
		if d, _, _ := r.next(t0, fail, nil); d != decisionRestart {
			t.Fatalf("failure: got %v", d)
		}
		if d, _, _ := r.next(t0, ok, nil); d != decisionDone {
			t.Fatalf("success: got %v", d)
		}
	})
	t.Run("an unrecoverable start error fails at once", func(t *testing.T) {
		r := newRestartTracker(policy, structs.JobTypeService, false, 1)
		if d, _, _ := r.next(t0, nil, errors.New("bad config")); d != decisionFail {
			t.Fatalf("got %v", d)
		}
		if d, _, _ := r.next(t0, nil, &drivers.RecoverableError{Err: errors.New("busy")}); d != decisionRestart {
			t.Fatalf("got %v", d)
		}
	})
}
