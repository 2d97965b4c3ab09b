package allocrunner

import (
	"context"
	"fmt"
	"io"

	"github.com/drover-sched/drover/client/checks"
	"github.com/drover-sched/drover/client/taskrunner"
)

// The alloc's service checks (client/checks) run beside its tasks: the
// loop starts them once the task runners are started and stops them when
// the tasks are done, on the first kill (a check failing while its task
// stops must not restart it) and on shutdown. A check's status change
// wakes the loop to judge health again; it is not itself reported to the
// servers. A script check runs in its task through the task runner, and
// check_restart restarts a task through the task runner's restart path,
// counted by its restart policy.

// newChecks returns the runner of the alloc's checks, or nil if its
// services have none.
func (ar *AllocRunner) newChecks() *checks.Runner {
	var nodeIP string
	if n := ar.cfg.Node; n != nil {
		nodeIP = n.Attributes["unique.network.ip-address"]
	}
	specs := checks.SpecsFor(ar.cfg.Alloc, nodeIP)
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

// CheckResults returns the latest result of each of the alloc's checks, by
// check ID.
func (ar *AllocRunner) CheckResults() map[string]checks.Result { return ar.checks.Results() }

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
