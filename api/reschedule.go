package api

import "time"

// Reschedule delay functions: how the wait grows between attempts.
const (
	RescheduleDelayFunctionConstant    = "constant"
	RescheduleDelayFunctionExponential = "exponential"
	RescheduleDelayFunctionFibonacci   = "fibonacci"
)

// ReschedulePolicy says how the servers replace a failed allocation with a
// new one, possibly on another node, once restarts in place have not helped.
type ReschedulePolicy struct {
	// Attempts limits reschedules within Interval; ignored when Unlimited.
	Attempts *int
	Interval *time.Duration

	// Delay is the wait before the first reschedule; DelayFunction grows it
	// for later ones, up to MaxDelay.
	Delay         *time.Duration
	DelayFunction *string
	MaxDelay      *time.Duration

	Unlimited *bool
}

// NewDefaultReschedulePolicy returns the reschedule policy for a job type.
// Services reschedule forever with a backoff, because they are meant to be
// running; a batch job gets one more try a day. Other types (system,
// sysbatch) do not reschedule: the all-zero policy is returned so that
// canonicalizing never meets a nil.
func NewDefaultReschedulePolicy(jobType string) *ReschedulePolicy {
	switch jobType {
	case JobTypeService:
		return &ReschedulePolicy{
			Attempts:      new(0),
			Interval:      new(time.Duration(0)),
			Delay:         new(30 * time.Second),
			DelayFunction: new(RescheduleDelayFunctionExponential),
			MaxDelay:      new(time.Hour),
			Unlimited:     new(true),
		}
	case JobTypeBatch:
		return &ReschedulePolicy{
			Attempts:      new(1),
			Interval:      new(24 * time.Hour),
			Delay:         new(5 * time.Second),
			DelayFunction: new(RescheduleDelayFunctionConstant),
			MaxDelay:      new(time.Duration(0)),
			Unlimited:     new(false),
		}
	default:
		return &ReschedulePolicy{
			Attempts:      new(0),
			Interval:      new(time.Duration(0)),
			Delay:         new(time.Duration(0)),
			DelayFunction: new(""),
			MaxDelay:      new(time.Duration(0)),
			Unlimited:     new(false),
		}
	}
}

// Copy returns a shallow copy; the pointed-to values are never mutated in
// place, so sharing them is safe.
func (r *ReschedulePolicy) Copy() *ReschedulePolicy {
	return copyPtr(r)
}

// Merge overwrites r's fields with the ones o sets. A nil o changes nothing.
func (r *ReschedulePolicy) Merge(o *ReschedulePolicy) {
	if o == nil {
		return
	}
	if o.Attempts != nil {
		r.Attempts = o.Attempts
	}
	if o.Interval != nil {
		r.Interval = o.Interval
	}
	if o.Delay != nil {
		r.Delay = o.Delay
	}
	if o.DelayFunction != nil {
		r.DelayFunction = o.DelayFunction
	}
	if o.MaxDelay != nil {
		r.MaxDelay = o.MaxDelay
	}
	if o.Unlimited != nil {
		r.Unlimited = o.Unlimited
	}
}

// Canonicalize fills unset fields with the defaults for jobType. It accepts
// a nil receiver, which system and sysbatch groups have.
func (r *ReschedulePolicy) Canonicalize(jobType string) {
	if r == nil {
		return
	}
	d := NewDefaultReschedulePolicy(jobType)
	d.Merge(r)
	*r = *d
}
