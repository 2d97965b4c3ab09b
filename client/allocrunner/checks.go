package allocrunner

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/drover-sched/drover/client/checks"
	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/structs"
)

// The alloc's service checks (client/checks) run beside its tasks: the
// loop starts them once the task runners are started and the start gate
// is open (a restored runner's at Confirm), and stops them when
// the tasks are done, on the first kill (a check failing while its task
// stops must not restart it) and on shutdown. A check's status change
// wakes the loop to judge health again; it is not itself reported to the
// servers. A script check runs in its task through the task runner, and
// check_restart restarts a task through the task runner's restart path,
// counted by its restart policy.

// newChecks returns the runner of the checks of alloc a's services, or
// nil if they have none.
func (ar *AllocRunner) newChecks(a *structs.Allocation) *checks.Runner {
	specs := checks.SpecsFor(a, ar.nodeIP())
	if len(specs) == 0 {
		return nil
	}
	return checks.New(checks.Config{
		Clock:   ar.clock,
		Logger:  ar.logger.Named("checks"),
		Exec:    ar.execInTask,
		Restart: ar.restartUnhealthy,
		OnChange: func() {
			select {
			case ar.checkChanged <- struct{}{}:
			default:
			}
		},
	}, specs)
}

func (ar *AllocRunner) nodeIP() string {
	if n := ar.cfg.Node; n != nil {
		return n.Attributes.Value("unique.network.ip-address")
	}
	return ""
}

// updateChecks is the loop's part of an Update: when the newer alloc's
// services have other checks (an in-place update of the job), the old
// checks stop and the new ones start, with their initial status, if the
// tasks run. A pending health verdict is judged by the new checks.
func (ar *AllocRunner) updateChecks(a *structs.Allocation) {
	old := ar.checks.Load()
	if slices.EqualFunc(old.Specs(), checks.SpecsFor(a, ar.nodeIP()), checks.Spec.Equal) {
		return
	}
	old.Stop()
	next := ar.newChecks(a)
	ar.checks.Store(next)
	if st := &ar.st; st.gateOpen && st.tasks.runners != nil && !st.tasksDone && !st.killing && !st.shuttingDown {
		next.Start()
	}
	ar.checkHealth()
}

// CheckResults returns the latest result of each of the alloc's checks, by
// check ID.
func (ar *AllocRunner) CheckResults() map[string]checks.Result { return ar.checks.Load().Results() }

// taskRunner returns the named task's runner, from any goroutine.
func (ar *AllocRunner) taskRunner(task string) (*taskrunner.TaskRunner, error) {
	tr := ar.view().tasks.runners[task]
	if tr == nil {
		return nil, fmt.Errorf("the alloc has no task %q", task)
	}
	return tr, nil
}

func (ar *AllocRunner) execInTask(ctx context.Context, task, command string, args []string, out io.Writer) (int, error) {
	tr, err := ar.taskRunner(task)
	if err != nil {
		return 0, err
	}
	return tr.Exec(ctx, command, args, out)
}

func (ar *AllocRunner) restartUnhealthy(ctx context.Context, task, reason string) error {
	tr, err := ar.taskRunner(task)
	if err != nil {
		return err
	}
	return tr.RestartUnhealthy(ctx, reason)
}
