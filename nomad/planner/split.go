package planner

import (
	"fmt"
	"sort"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// PartBudget bounds the encoded size of one plan a worker submits, and so
// of the raft entry the plan applier commits for it: half the RPC message
// limit leaves room for the request around it and the answer.
const PartBudget = rpcx.DefaultMaxMessageSize / 2

// Split cuts a normalized plan that is larger than budget into parts
// that each fit, by allocation, in node order so the cut is the same on
// every run. Every part is a plan for the same eval, job and snapshot; the
// first carries the deployment changes and annotations. A plan that fits
// is returned whole. An all_at_once plan must commit whole, so one too
// large to send is an error naming the job.
//
// Committing parts one after another is what the plan applier does with a
// plan anyway: each node is checked on its own, some may be refused, and
// the scheduler plans again for what was not committed.
func Split(plan *structs.Plan, budget int) ([]*structs.Plan, error) {
	whole, err := rpcx.Encode(plan)
	if err != nil {
		return nil, fmt.Errorf("encoding plan for eval %s: %w", structs.ShortID(plan.EvalID), err)
	}
	if len(whole) <= budget {
		return []*structs.Plan{plan}, nil
	}
	if plan.AllAtOnce {
		return nil, fmt.Errorf("plan for eval %s of job %q is %d bytes, over the %d bytes one plan may have, and the job asks for all_at_once: lower the job's counts or turn all_at_once off",
			structs.ShortID(plan.EvalID), jobID(plan), len(whole), budget)
	}
	empty := func() *structs.Plan {
		c := *plan
		c.NodeUpdate = map[string][]*structs.Allocation{}
		c.NodeAllocation = map[string][]*structs.Allocation{}
		c.NodePreemptions = map[string][]*structs.Allocation{}
		c.Deployment, c.DeploymentUpdates, c.Annotations = nil, nil, nil
		return &c
	}
	base, err := rpcx.Encode(empty())
	if err != nil {
		return nil, err
	}
	first := empty()
	first.Deployment, first.DeploymentUpdates, first.Annotations = plan.Deployment, plan.DeploymentUpdates, plan.Annotations
	head, err := rpcx.Encode(first)
	if err != nil {
		return nil, err
	}
	parts := []*structs.Plan{first}
	size := len(head)
	add := func(kind func(*structs.Plan) map[string][]*structs.Allocation, node string, a *structs.Allocation) error {
		buf, err := rpcx.Encode(a)
		if err != nil {
			return err
		}
		// The node ID is a map key once per part; count it per alloc to
		// stay on the safe side.
		n := len(buf) + len(node) + 8
		if size+n > budget && size > len(base) {
			parts = append(parts, empty())
			size = len(base)
		}
		cur := parts[len(parts)-1]
		m := kind(cur)
		m[node] = append(m[node], a)
		size += n
		return nil
	}
	kinds := []func(*structs.Plan) map[string][]*structs.Allocation{
		func(p *structs.Plan) map[string][]*structs.Allocation { return p.NodeUpdate },
		func(p *structs.Plan) map[string][]*structs.Allocation { return p.NodePreemptions },
		func(p *structs.Plan) map[string][]*structs.Allocation { return p.NodeAllocation },
	}
	for _, kind := range kinds {
		src := kind(plan)
		nodes := make([]string, 0, len(src))
		for n := range src {
			nodes = append(nodes, n)
		}
		sort.Strings(nodes)
		for _, node := range nodes {
			for _, a := range src[node] {
				if err := add(kind, node, a); err != nil {
					return nil, err
				}
			}
		}
	}
	return parts, nil
}

func jobID(p *structs.Plan) string {
	if p.Job == nil {
		return ""
	}
	return p.Job.ID
}

// MergeResults folds the result of a later part of a plan cut by Split
// into the results so far (nil for the first part).
func MergeResults(into, r *structs.PlanResult) *structs.PlanResult {
	if into == nil {
		return r
	}
	for _, pair := range []struct {
		dst, src *map[string][]*structs.Allocation
	}{
		{&into.NodeUpdate, &r.NodeUpdate}, {&into.NodeAllocation, &r.NodeAllocation}, {&into.NodePreemptions, &r.NodePreemptions},
	} {
		if *pair.dst == nil {
			*pair.dst = map[string][]*structs.Allocation{}
		}
		for node, allocs := range *pair.src {
			(*pair.dst)[node] = append((*pair.dst)[node], allocs...)
		}
	}
	if r.Deployment != nil {
		into.Deployment = r.Deployment
	}
	into.DeploymentUpdates = append(into.DeploymentUpdates, r.DeploymentUpdates...)
	into.RejectedNodes = append(into.RejectedNodes, r.RejectedNodes...)
	into.RefreshIndex = max(into.RefreshIndex, r.RefreshIndex)
	into.AllocIndex = max(into.AllocIndex, r.AllocIndex)
	return into
}
