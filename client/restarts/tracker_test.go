package restarts

import (
	"errors"
	"math/rand"
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
	mainTask := &structs.Task{Name: "main"}
	initTask := &structs.Task{Name: "init", Lifecycle: &structs.TaskLifecycleConfig{Hook: structs.TaskLifecycleHookPrestart}}

	t.Run("attempts within the interval, then failed", func(t *testing.T) {
		r := newTestTracker(policy, structs.JobTypeService, mainTask)
		for i := 0; i < 2; i++ {
			d, delay, _ := r.Next(t0.Add(time.Duration(i)*time.Second), fail, nil)
			if d != Restart || delay < 10*time.Second || delay > 12500*time.Millisecond {
				t.Fatalf("attempt %d: %v %v", i, d, delay)
			}
		}
		if d, _, _ := r.Next(t0.Add(3*time.Second), fail, nil); d != Fail {
			t.Fatalf("third failure: %v", d)
		}
	})
	t.Run("a failure after the interval opens a new window", func(t *testing.T) {
		r := newTestTracker(policy, structs.JobTypeService, mainTask)
		r.Next(t0, fail, nil)
		r.Next(t0.Add(time.Second), fail, nil)
		if d, _, _ := r.Next(t0.Add(2*time.Minute), fail, nil); d != Restart {
			t.Fatalf("got %v", d)
		}
	})
	t.Run("delay mode waits out the interval", func(t *testing.T) {
		p := *policy
		p.Mode = structs.RestartPolicyModeDelay
		r := newTestTracker(&p, structs.JobTypeService, mainTask)
		r.Next(t0, fail, nil)
		r.Next(t0.Add(time.Second), fail, nil)
		d, delay, _ := r.Next(t0.Add(20*time.Second), fail, nil)
		if d != Restart || delay != 40*time.Second {
			t.Fatalf("got %v %v", d, delay)
		}
	})
	t.Run("a batch task that exits 0 is done", func(t *testing.T) {
		r := newTestTracker(policy, structs.JobTypeBatch, mainTask)
		if d, _, _ := r.Next(t0, ok, nil); d != Done {
			t.Fatalf("got %v", d)
		}
	})
	t.Run("a service task that exits 0 is restarted", func(t *testing.T) {
		r := newTestTracker(policy, structs.JobTypeService, mainTask)
		if d, _, _ := r.Next(t0, ok, nil); d != Restart {
			t.Fatalf("got %v", d)
		}
	})
	t.Run("a service job's ephemeral lifecycle task that exits 0 is done, one that fails is restarted", func(t *testing.T) {
		r := newTestTracker(policy, structs.JobTypeService, initTask)
		if d, _, _ := r.Next(t0, fail, nil); d != Restart {
			t.Fatalf("failure: got %v", d)
		}
		if d, _, _ := r.Next(t0, ok, nil); d != Done {
			t.Fatalf("success: got %v", d)
		}
	})
	t.Run("a sidecar that exits 0 is restarted, in a batch job too", func(t *testing.T) {
		for _, hook := range []string{structs.TaskLifecycleHookPrestart, structs.TaskLifecycleHookPoststart} {
			sidecar := &structs.Task{Name: "sidecar", Lifecycle: &structs.TaskLifecycleConfig{Hook: hook, Sidecar: true}}
			for _, jobType := range []string{structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSysBatch} {
				r := newTestTracker(policy, jobType, sidecar)
				if d, _, _ := r.Next(t0, ok, nil); d != Restart {
					t.Errorf("%s sidecar in a %s job: got %v, want a restart", hook, jobType, d)
				}
			}
		}
	})
	t.Run("a poststop task that exits 0 is done", func(t *testing.T) {
		poststop := &structs.Task{Name: "cleanup", Lifecycle: &structs.TaskLifecycleConfig{Hook: structs.TaskLifecycleHookPoststop, Sidecar: true}}
		if d, _, _ := newTestTracker(policy, structs.JobTypeService, poststop).Next(t0, ok, nil); d != Done {
			t.Fatalf("got %v", d)
		}
	})
	t.Run("an unrecoverable start error fails at once", func(t *testing.T) {
		r := newTestTracker(policy, structs.JobTypeService, mainTask)
		if d, _, _ := r.Next(t0, nil, errors.New("bad config")); d != Fail {
			t.Fatalf("got %v", d)
		}
		if d, _, _ := r.Next(t0, nil, &drivers.RecoverableError{Err: errors.New("busy")}); d != Restart {
			t.Fatalf("got %v", d)
		}
	})
}

// newTestTracker is New with a seeded jitter source.
func newTestTracker(policy *structs.RestartPolicy, jobType string, task *structs.Task) *Tracker {
	r := New(policy, jobType, task, rand.New(rand.NewSource(1)).Int63n)
	return &r
}
