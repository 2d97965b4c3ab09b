package structs

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// ScalingPolicyTypeHorizontal is the one kind of group scaling policy: it
// changes how many allocations of the group run.
const ScalingPolicyTypeHorizontal = "horizontal"

// Scaling targets name what a scaling request changes, as keys of
// JobScaleRequest.Target and ScalingPolicy.Target (Nomad's names).
const (
	ScalingTargetNamespace = "Namespace"
	ScalingTargetJob       = "Job"
	ScalingTargetGroup     = "Group"
)

// JobTrackedScalingEvents is how many scaling events are kept per task
// group, as in Nomad: older ones are dropped when a new one arrives.
const JobTrackedScalingEvents = 20

// ScalingPolicy is a group's scaling block. Drover has no autoscaler; it
// keeps the block so that job files and API clients round-trip, and it
// enforces Min and Max on every scaling request and registration, the way
// Nomad does. Policy is the autoscaler's own configuration and is kept
// as opaque data.
type ScalingPolicy struct {
	Type    string
	Target  map[string]string
	Min     int64
	Max     int64
	Policy  map[string]any
	Enabled bool
}

// Copy returns a deep copy.
func (p *ScalingPolicy) Copy() *ScalingPolicy {
	if p == nil {
		return nil
	}
	c := *p
	c.Target = maps.Clone(p.Target)
	c.Policy = CopyMapAny(p.Policy)
	return &c
}

// canonicalize fills the policy's type and its target (the group it
// belongs to), as Nomad does when a job is registered.
func (p *ScalingPolicy) canonicalize(job *Job, tg *TaskGroup) {
	if p.Type == "" {
		p.Type = ScalingPolicyTypeHorizontal
	}
	p.Target = map[string]string{
		ScalingTargetNamespace: job.Namespace,
		ScalingTargetJob:       job.ID,
		ScalingTargetGroup:     tg.Name,
	}
}

// validate checks the policy's bounds and that the group's count lies
// within them. A Max below zero means the block did not set one (the agent
// converts a missing max to -1, as Nomad does).
func (p *ScalingPolicy) validate(tg *TaskGroup, pr problems) {
	if p.Type != ScalingPolicyTypeHorizontal && p.Type != "" {
		pr.add("type %q is not supported for a group; use %q", p.Type, ScalingPolicyTypeHorizontal)
	}
	if p.Min < 0 {
		pr.add("min must be >= 0, got %d", p.Min)
	}
	switch {
	case p.Max < 0:
		pr.add("max is missing or negative (set max to the largest count allowed)")
	case p.Max < p.Min:
		pr.add("max (%d) must not be less than min (%d)", p.Max, p.Min)
	}
	if int64(tg.Count) < p.Min {
		pr.add("the group's count %d is less than the scaling minimum %d", tg.Count, p.Min)
	}
	if p.Max >= 0 && int64(tg.Count) > p.Max {
		pr.add("the group's count %d is greater than the scaling maximum %d", tg.Count, p.Max)
	}
}

// CheckScale decides whether group of job may be set to count, for a
// scaling request: the group must exist, the count must not be negative,
// must be 0 or 1 for system and sysbatch jobs, and must lie within the
// group's scaling block if it has one (enabled or not, as in Nomad). A nil
// count (a request that only records an event) needs only the group. It
// returns the group, or a *ValidationError naming the field and the
// allowed values.
func CheckScale(job *Job, group string, count *int64) (*TaskGroup, error) {
	p := newProblems()
	tg := job.LookupTaskGroup(group)
	if tg == nil {
		p.add("Target.Group: job %q has no task group %q (its groups: %s)", job.ID, group, groupList(job))
		return nil, p.err()
	}
	if count == nil {
		return tg, nil
	}
	n := *count
	switch {
	case n < 0:
		p.add("Count: must be >= 0, got %d", n)
	case int64(int(n)) != n:
		p.add("Count: %d is too large", n)
	case (job.Type == JobTypeSystem || job.Type == JobTypeSysBatch) && n > 1:
		p.add("Count: %s jobs run one allocation per node and can only be scaled to 0 or 1, got %d", job.Type, n)
	}
	if s := tg.Scaling; s != nil {
		if n < s.Min {
			p.add("Count: %d is less than the minimum %d of group %q's scaling block", n, s.Min, group)
		}
		if s.Max >= 0 && n > s.Max {
			p.add("Count: %d is greater than the maximum %d of group %q's scaling block", n, s.Max, group)
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return tg, nil
}

// groupList names a job's groups for an error message.
func groupList(job *Job) string {
	names := make([]string, 0, len(job.TaskGroups))
	for _, tg := range job.TaskGroups {
		names = append(names, fmt.Sprintf("%q", tg.Name))
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// ErrScalingBlocked refuses to change a group's count while a deployment
// of the job is in progress, as Nomad does: the deployment would otherwise
// be judged against a count it was not started with. The text is Nomad's,
// which autoscalers and other tools match on.
var ErrScalingBlocked = NewCodedError("ScalingBlocked", "job scaling blocked due to active deployment")
