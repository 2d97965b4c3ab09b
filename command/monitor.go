package command

import (
	"fmt"
	"strings"
	"time"

	"github.com/drover-sched/drover/api"
)

// Monitor timing. The blocking-query wait bounds how long a monitor can go
// without a chance to print progress; the progress interval is how long it
// stays silent before saying it is still waiting.
const (
	monitorWait             = 10 * time.Second
	monitorProgressInterval = 30 * time.Second

	// noIndexRetry is the pause between reads when the agent does not
	// send X-Nomad-Index, which leaves no way to block. It only applies
	// to an agent that does not support blocking queries.
	noIndexRetry = time.Second
)

// Exit codes of a monitored run, as Nomad's: placement problems are not
// errors of the command, so they get their own code.
const (
	exitOK               = 0
	exitError            = 1
	exitPlacementFailure = 2
)

// monitor follows an evaluation, and then the deployment it started, with
// blocking queries, printing each change as it happens. It is what
// `job run`, `job stop`, `job revert`, `alloc stop` and `node drain` do
// after their write, so the user sees the outcome rather than an eval ID.
type monitor struct {
	m       *Meta
	client  *api.Client
	verbose bool

	// noDeployment stops after the evaluation, for writes (stop, drain)
	// whose deployment, if any, is not the user's concern.
	noDeployment bool

	// lastOutput is when the monitor last printed, for progress lines.
	lastOutput time.Time

	// allocs remembers the allocations already reported.
	allocs map[string]bool
}

func newMonitor(m *Meta, client *api.Client, verbose bool) *monitor {
	return &monitor{m: m, client: client, verbose: verbose, allocs: map[string]bool{}}
}

// info prints a timestamped headline, "==> <time>: ...".
func (mon *monitor) info(format string, args ...any) {
	now := mon.m.now()
	mon.lastOutput = now
	mon.m.out("==> %s: %s", now.Format(timeLayout), fmt.Sprintf(format, args...))
}

// detail prints an indented line under the last headline.
func (mon *monitor) detail(format string, args ...any) {
	mon.lastOutput = mon.m.now()
	mon.m.out("    "+format, args...)
}

// progress prints a reminder that the monitor is still waiting, if it has
// been silent for a while.
func (mon *monitor) progress(format string, args ...any) {
	if mon.m.now().Sub(mon.lastOutput) >= monitorProgressInterval {
		mon.detail(format, args...)
	}
}

// nextIndex picks the index for the next blocking query. An index that went
// backwards (a restored snapshot) restarts from the answer's index; a
// missing index (no blocking support) means pausing instead.
func (mon *monitor) nextIndex(prev uint64, qm *api.QueryMeta) (uint64, bool) {
	if qm == nil || qm.LastIndex == 0 {
		select {
		case <-time.After(noIndexRetry):
		case <-mon.m.ctx.Done():
		}
		return 0, false
	}
	return qm.LastIndex, qm.LastIndex != prev
}

func (mon *monitor) query(index uint64) *api.QueryOptions {
	return (&api.QueryOptions{WaitIndex: index, WaitTime: monitorWait}).WithContext(mon.m.ctx)
}

// interrupted reports (and explains) a monitor ended by Ctrl-C.
func (mon *monitor) interrupted(what, id string) bool {
	if mon.m.ctx.Err() == nil {
		return false
	}
	mon.m.out("")
	mon.info("Monitoring interrupted; the %s %q continues. Check on it with `drover %s status %s`.",
		what, shortID(id, mon.verbose), what, id)
	return true
}

// monitorEval follows evalID until it is complete, reporting the
// allocations it places and, if it places nothing, why. Evaluations that
// continue the work (a rolling update's next eval) are followed too. It
// returns the command's exit code.
func (mon *monitor) monitorEval(evalID string) int {
	mon.info("Monitoring evaluation %q", shortID(evalID, mon.verbose))
	var (
		index      uint64
		lastStatus string
		announced  bool
		eval       *api.Evaluation
	)
	for {
		e, qm, err := mon.client.Evaluations().Info(evalID, mon.query(index))
		if err != nil {
			if mon.interrupted("eval", evalID) {
				return exitError
			}
			if api.IsNotFound(err) {
				return mon.m.errorf("No evaluation with ID %q found", evalID)
			}
			return mon.m.errorf("Error reading evaluation: %v", err)
		}
		eval = e
		var changed bool
		index, changed = mon.nextIndex(index, qm)

		if !announced {
			announced = true
			switch {
			case eval.JobID != "" && eval.NodeID != "":
				mon.detail("Evaluation triggered by node %q for job %q", shortID(eval.NodeID, mon.verbose), eval.JobID)
			case eval.JobID != "":
				mon.detail("Evaluation triggered by job %q", eval.JobID)
			case eval.NodeID != "":
				mon.detail("Evaluation triggered by node %q", shortID(eval.NodeID, mon.verbose))
			}
			if eval.DeploymentID != "" {
				mon.detail("Evaluation within deployment: %q", shortID(eval.DeploymentID, mon.verbose))
			}
		}
		if changed || lastStatus == "" {
			if err := mon.reportAllocs(eval); err != nil {
				return mon.m.errorf("Error reading allocations of evaluation %q: %v", evalID, err)
			}
		}
		if eval.Status != lastStatus {
			if lastStatus != "" {
				mon.detail("Evaluation status changed: %q -> %q", lastStatus, eval.Status)
			}
			lastStatus = eval.Status
		}

		if eval.TerminalStatus() && eval.NextEval != "" && eval.Status == api.EvalStatusComplete && !mon.hasDeployment(eval) {
			// A rolling update without a deployment hands on to its next
			// evaluation, which may wait before it runs. One with a
			// deployment is followed by its deployment instead, as
			// Nomad's monitor does: the deployment, not the chain of
			// evaluations, says when the rollout is over and how it went.
			wait := ""
			if eval.Wait > 0 {
				wait = " in " + shortDuration(eval.Wait)
			}
			mon.info("Monitoring next evaluation %q%s", shortID(eval.NextEval, mon.verbose), wait)
			evalID, index, lastStatus = eval.NextEval, 0, ""
			continue
		}
		if eval.TerminalStatus() {
			break
		}
		mon.progress("Still waiting for evaluation %q (status %q)", shortID(evalID, mon.verbose), eval.Status)
	}
	return mon.finishEval(eval)
}

// reportAllocs prints each allocation of eval not reported before.
func (mon *monitor) reportAllocs(eval *api.Evaluation) error {
	allocs, _, err := mon.client.Evaluations().Allocations(eval.ID, (&api.QueryOptions{}).WithContext(mon.m.ctx))
	if err != nil {
		return err
	}
	for _, a := range allocs {
		if mon.allocs[a.ID] {
			continue
		}
		mon.allocs[a.ID] = true
		verb := "created"
		if a.CreateIndex < eval.CreateIndex {
			verb = "modified"
		}
		mon.detail("Allocation %q %s: node %q, group %q",
			shortID(a.ID, mon.verbose), verb, shortID(a.NodeID, mon.verbose), a.TaskGroup)
	}
	return nil
}

// finishEval reports how a terminal evaluation ended and, for a service
// job, follows the deployment it started.
func (mon *monitor) finishEval(eval *api.Evaluation) int {
	id := shortID(eval.ID, mon.verbose)
	code := exitOK
	switch {
	case len(eval.FailedTGAllocs) > 0:
		mon.info("Evaluation %q finished with status %q but failed to place all allocations:", id, eval.Status)
		mon.m.out("%s", strings.TrimRight(formatFailedPlacements(eval.FailedTGAllocs, "    ", mon.verbose), "\n"))
		if eval.BlockedEval != "" {
			mon.detail("Evaluation %q waiting for additional capacity to place remainder", shortID(eval.BlockedEval, mon.verbose))
		}
		code = exitPlacementFailure
	case eval.Status == api.EvalStatusFailed:
		mon.info("Evaluation %q finished with status %q: %s", id, eval.Status, orNone(eval.StatusDescription))
		code = exitPlacementFailure
	default:
		mon.info("Evaluation %q finished with status %q", id, eval.Status)
	}
	// A deployment with unplaced allocations cannot finish until capacity
	// appears, so following it would only hang; the blocked eval has been
	// reported instead.
	if code != exitOK || mon.noDeployment || eval.Status != api.EvalStatusComplete || eval.Type != api.JobTypeService {
		return code
	}
	deploymentID, err := mon.deploymentOf(eval)
	if err != nil {
		return mon.m.errorf("Error looking up the deployment of evaluation %q: %v", id, err)
	}
	if deploymentID == "" {
		return code
	}
	return mon.monitorDeployment(deploymentID)
}

// hasDeployment reports whether finishEval would follow a deployment of
// eval (a failed lookup counts as none: finishEval reports it).
func (mon *monitor) hasDeployment(eval *api.Evaluation) bool {
	if mon.noDeployment || eval.Type != api.JobTypeService {
		return false
	}
	id, err := mon.deploymentOf(eval)
	return err == nil && id != ""
}

// deploymentOf finds the deployment an evaluation belongs to: the one it
// names, or else the job's latest deployment if it is for the version the
// evaluation scheduled. "" means none.
func (mon *monitor) deploymentOf(eval *api.Evaluation) (string, error) {
	if eval.DeploymentID != "" {
		return eval.DeploymentID, nil
	}
	if eval.JobID == "" {
		return "", nil
	}
	q := (&api.QueryOptions{Namespace: eval.Namespace}).WithContext(mon.m.ctx)
	d, _, err := mon.client.Jobs().LatestDeployment(eval.JobID, q)
	switch {
	case api.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	case d == nil || d.JobModifyIndex != eval.JobModifyIndex:
		return "", nil
	}
	return d.ID, nil
}

// monitorDeployment follows a deployment until it is no longer active,
// printing its status and its per-group progress whenever they change.
func (mon *monitor) monitorDeployment(id string) int {
	mon.info("Monitoring deployment %q", shortID(id, mon.verbose))
	var (
		index     uint64
		lastLine  string
		lastTable string
	)
	for {
		d, qm, err := mon.client.Deployments().Info(id, mon.query(index))
		if err != nil {
			if mon.interrupted("deployment", id) {
				return exitError
			}
			return mon.m.errorf("Error reading deployment: %v", err)
		}
		index, _ = mon.nextIndex(index, qm)

		line := fmt.Sprintf("Deployment %q %s", shortID(d.ID, mon.verbose), d.Status)
		if d.StatusDescription != "" {
			line += ": " + d.StatusDescription
		}
		if line != lastLine {
			mon.detail("%s", line)
			lastLine = line
		}
		if table := deploymentTable(d, time.Time{}); table != lastTable {
			mon.m.out("")
			mon.m.out("%s", indent(table, "    "))
			lastTable = table
		}
		if !d.Active() {
			mon.info("Deployment %q finished with status %q", shortID(d.ID, mon.verbose), d.Status)
			if d.Status == api.DeploymentStatusSuccessful || d.Status == api.DeploymentStatusCancelled {
				return exitOK
			}
			return exitError
		}
		mon.progress("Deployment %q still %s: %s", shortID(d.ID, mon.verbose), d.Status, deploymentProgress(d))
	}
}

// deploymentProgress summarises a deployment as "1/3 healthy".
func deploymentProgress(d *api.Deployment) string {
	var healthy, desired int
	for _, s := range d.TaskGroups {
		healthy += s.HealthyAllocs
		desired += s.DesiredTotal
	}
	return fmt.Sprintf("%d/%d allocations healthy", healthy, desired)
}

// indent prefixes every non-empty line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "\n")
}
