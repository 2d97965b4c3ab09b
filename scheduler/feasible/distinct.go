package feasible

import (
	"strconv"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// distinctHostsChecker refuses a node that already runs a live allocation
// of the job (job-level constraint, group "") or of the same group
// (group-level or task-level constraint), counting what is in the snapshot
// and what the plan places, and ignoring what the plan stops.
type distinctHostsChecker struct {
	ctx   *EvalContext
	job   *structs.Job
	group string
}

func (c distinctHostsChecker) check(node *structs.Node) string {
	if c.ctx.jobTracker(c.job).onNode(node.ID, c.group) > 0 {
		return structs.ConstraintDistinctHosts
	}
	return ""
}

// distinctPropertyChecker allows at most limit live allocations of the job
// (job-level, group "") or of the group per value of a node property, e.g.
// at most two per ${meta.rack}. Counts come from the job tracker, which
// folds in the plan incrementally.
type distinctPropertyChecker struct {
	ctx        *EvalContext
	job        *structs.Job
	group      string
	constraint *structs.Constraint
	reason     string
}

func newDistinctPropertyChecker(ctx *EvalContext, job *structs.Job, group string, c *structs.Constraint) distinctPropertyChecker {
	return distinctPropertyChecker{
		ctx: ctx, job: job, group: group, constraint: c,
		reason: constraintReason(c),
	}
}

func (c distinctPropertyChecker) check(node *structs.Node) string {
	value, ok := resolveTarget(c.constraint.LTarget, node)
	if !ok {
		return "missing property " + c.constraint.LTarget
	}
	counts := c.ctx.jobTracker(c.job).propertyCounts(c.constraint.LTarget, c.group)
	if counts[value] >= c.limit(node) {
		return c.reason
	}
	return ""
}

// limit is RTarget (itself possibly interpolated), default and minimum 1.
func (c distinctPropertyChecker) limit(node *structs.Node) int {
	if c.constraint.RTarget == "" {
		return 1
	}
	raw, _ := resolveTarget(c.constraint.RTarget, node)
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// distinctHostsEnabled reads a distinct_hosts constraint's value: empty or
// true enables it.
func distinctHostsEnabled(c *structs.Constraint) bool {
	if c.RTarget == "" {
		return true
	}
	b, err := strconv.ParseBool(c.RTarget)
	return err != nil || b
}
