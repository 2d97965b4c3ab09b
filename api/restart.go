package api

import "time"

// Restart modes: what happens when a task has used up its attempts within
// the interval.
const (
	// RestartPolicyModeDelay waits until the interval has passed and then
	// starts counting attempts again.
	RestartPolicyModeDelay = "delay"

	// RestartPolicyModeFail fails the task, which hands the allocation to
	// the reschedule policy.
	RestartPolicyModeFail = "fail"
)

// RestartPolicy says how the client restarts a failed task in place, on the
// same node, before the servers get involved.
type RestartPolicy struct {
	Interval *time.Duration
	Attempts *int
	Delay    *time.Duration
	Mode     *string

	// RenderTemplates re-renders the task's templates on restart.
	RenderTemplates *bool
}

// NewDefaultRestartPolicy returns the restart policy for a job type. Tasks
// that should run forever get fewer attempts in a short interval, so that a
// crash loop soon moves to another node; batch tasks retry more, over a day.
func NewDefaultRestartPolicy(jobType string) *RestartPolicy {
	switch jobType {
	case JobTypeService, JobTypeSystem:
		return &RestartPolicy{
			Delay:           new(15 * time.Second),
			Attempts:        new(2),
			Interval:        new(30 * time.Minute),
			Mode:            new(RestartPolicyModeFail),
			RenderTemplates: new(false),
		}
	default:
		return &RestartPolicy{
			Delay:           new(15 * time.Second),
			Attempts:        new(3),
			Interval:        new(24 * time.Hour),
			Mode:            new(RestartPolicyModeFail),
			RenderTemplates: new(false),
		}
	}
}

// Merge overwrites r's fields with the ones o sets. A nil o changes nothing.
func (r *RestartPolicy) Merge(o *RestartPolicy) {
	if o == nil {
		return
	}
	if o.Interval != nil {
		r.Interval = o.Interval
	}
	if o.Attempts != nil {
		r.Attempts = o.Attempts
	}
	if o.Delay != nil {
		r.Delay = o.Delay
	}
	if o.Mode != nil {
		r.Mode = o.Mode
	}
	if o.RenderTemplates != nil {
		r.RenderTemplates = o.RenderTemplates
	}
}
