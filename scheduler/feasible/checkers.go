package feasible

import (
	"strings"

	"github.com/drover-sched/drover/structs"
)

// checker is one link of the feasibility chain. check returns "" when the
// node passes, or the reason it is filtered, worded the way placement
// metrics and `job status` show it.
type checker interface {
	check(node *structs.Node) string
}

// Filter reasons that are not constraint strings.
const (
	reasonNotReady        = "node not ready"
	reasonIneligible      = "node not eligible"
	reasonDraining        = "node is draining"
	reasonDatacenter      = "node not in datacenter"
	reasonPool            = "node not in node pool"
	reasonMissingDrivers  = "missing drivers"
	reasonClassIneligible = "computed class ineligible"
)

// readyChecker refuses nodes that may not take new work or are outside the
// job's datacenters and node pool. The scheduler normally passes only such
// nodes (ReadyNodesInDCsAndPool), but a snapshot refresh or a preferred
// node can bring others in, and the check is cheap.
type readyChecker struct {
	job *structs.Job
}

func (c readyChecker) check(node *structs.Node) string {
	switch {
	case node.Status != structs.NodeStatusReady:
		return reasonNotReady
	case node.DrainStrategy != nil:
		return reasonDraining
	case node.SchedulingEligibility != "" && node.SchedulingEligibility != structs.NodeSchedulingEligible:
		return reasonIneligible
	case len(c.job.Datacenters) > 0 && !InDatacenters(node.Datacenter, c.job.Datacenters):
		return reasonDatacenter
	case !inPool(node, c.job.NodePool):
		return reasonPool
	}
	return ""
}

// driverChecker refuses nodes lacking a healthy driver for some task.
// Driver health changes without the computed class changing, so this is
// checked per node, never cached per class.
type driverChecker struct {
	drivers []string
}

func (c driverChecker) check(node *structs.Node) string {
	for _, d := range c.drivers {
		if !node.DriverHealthy(d) {
			return reasonMissingDrivers
		}
	}
	return ""
}

// constraintReason names a constraint in metrics: its string without the
// trailing space an operator without a value (is_set) leaves.
func constraintReason(c *structs.Constraint) string { return strings.TrimSpace(c.String()) }

// constraintChecker tests plain constraints (not distinct_*) node by node.
type constraintChecker struct {
	ctx         *EvalContext
	constraints []*structs.Constraint
}

func (c constraintChecker) check(node *structs.Node) string {
	for _, con := range c.constraints {
		if !meetsConstraint(c.ctx, con, node) {
			return constraintReason(con)
		}
	}
	return ""
}

// classChecker tests the constraints whose outcome depends only on what the
// computed class hashes, once per class and group; other nodes of the class
// reuse the verdict. Nodes without a computed class are checked one by one.
type classChecker struct {
	ctx   *EvalContext
	group string
	inner constraintChecker
}

func (c classChecker) check(node *structs.Node) string {
	class := node.ComputedClass
	if class == "" {
		return c.inner.check(node)
	}
	if v, ok := c.ctx.classes.get(c.group, class); ok {
		if v.ok {
			return ""
		}
		if v.reason == "" {
			return reasonClassIneligible
		}
		// The real reason, so metrics count nodes by the constraint that
		// refused their class rather than by the cache that remembered it.
		return v.reason
	}
	reason := c.inner.check(node)
	c.ctx.classes.set(c.group, class, classVerdict{ok: reason == "", reason: reason})
	return reason
}
