package structs

// A plan names every allocation it places with the job it runs, and the
// scheduler points them all at the one job the plan is for. Encoded as is,
// each allocation would carry its own copy of that job: a plan for 1,000
// placements of a 1 MB job would be a gigabyte on the wire and in the raft
// log. Normalized, a plan sends the job once (Plan.Job) and allocations
// carry none where it is that job; stops carry none at all, since a stop
// only names the alloc and what the scheduler decided about it.

// Normalized returns a shallow copy of p whose allocations carry no job
// where Plan.Job stands for it: placements and updates whose Job is
// p.Job, and every stop and preemption. Allocations are copied before
// they are changed, so p is left as it is.
func (p *Plan) Normalized() *Plan {
	c := *p
	c.NodeUpdate = withoutJob(p.NodeUpdate, nil, true)
	c.NodePreemptions = withoutJob(p.NodePreemptions, nil, true)
	c.NodeAllocation = withoutJob(p.NodeAllocation, p.Job, false)
	return &c
}

// Denormalize gives every placement or update without a job the plan's
// job again, in place: the plan applier and the state store read
// alloc.Job.
func (p *Plan) Denormalize() {
	if p.Job == nil {
		return
	}
	for _, allocs := range p.NodeAllocation {
		for i, a := range allocs {
			if a != nil && a.Job == nil {
				c := *a
				c.Job = p.Job
				allocs[i] = &c
			}
		}
	}
}

// Normalized returns a shallow copy of r whose allocations carry no job:
// the worker that submitted the plan has the job, and an answer listing
// every committed allocation with its job could be too large to send.
func (r *PlanResult) Normalized() *PlanResult {
	c := *r
	c.NodeUpdate = withoutJob(r.NodeUpdate, nil, true)
	c.NodePreemptions = withoutJob(r.NodePreemptions, nil, true)
	c.NodeAllocation = withoutJob(r.NodeAllocation, nil, true)
	return &c
}

// withoutJob copies m, replacing each alloc whose Job is job (or, with
// all, any alloc with a job) by a copy without it.
func withoutJob(m map[string][]*Allocation, job *Job, all bool) map[string][]*Allocation {
	if m == nil {
		return nil
	}
	out := make(map[string][]*Allocation, len(m))
	for node, allocs := range m {
		list := make([]*Allocation, len(allocs))
		for i, a := range allocs {
			if a != nil && a.Job != nil && (all || a.Job == job) {
				c := *a
				c.Job = nil
				a = &c
			}
			list[i] = a
		}
		out[node] = list
	}
	return out
}
