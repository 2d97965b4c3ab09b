package api

import "time"

// UpdateStrategy says how a new version of a group replaces the old one: a
// rolling update of MaxParallel allocations at a time, each one waiting for
// health before the next, optionally behind canaries.
type UpdateStrategy struct {
	// Stagger is the wait between rolling batches. Deprecated by Nomad in
	// favour of health-based progress; kept so that old jobs decode.
	Stagger     *time.Duration
	MaxParallel *int

	// HealthCheck is "checks", "task_states" or "manual".
	HealthCheck      *string
	MinHealthyTime   *time.Duration
	HealthyDeadline  *time.Duration
	ProgressDeadline *time.Duration
	Canary           *int
	AutoRevert       *bool
	AutoPromote      *bool
}

// DefaultUpdateStrategy returns the strategy of a service or system job that
// sets none.
func DefaultUpdateStrategy() *UpdateStrategy {
	return &UpdateStrategy{
		Stagger:          new(30 * time.Second),
		MaxParallel:      new(1),
		HealthCheck:      new("checks"),
		MinHealthyTime:   new(10 * time.Second),
		HealthyDeadline:  new(5 * time.Minute),
		ProgressDeadline: new(10 * time.Minute),
		Canary:           new(0),
		AutoRevert:       new(false),
		AutoPromote:      new(false),
	}
}

// Copy returns a shallow copy; see ReschedulePolicy.Copy.
func (u *UpdateStrategy) Copy() *UpdateStrategy {
	return copyPtr(u)
}

// Merge overwrites u's fields with the ones o sets. A nil o changes nothing.
func (u *UpdateStrategy) Merge(o *UpdateStrategy) {
	if o == nil {
		return
	}
	if o.Stagger != nil {
		u.Stagger = o.Stagger
	}
	if o.MaxParallel != nil {
		u.MaxParallel = o.MaxParallel
	}
	if o.HealthCheck != nil {
		u.HealthCheck = o.HealthCheck
	}
	if o.MinHealthyTime != nil {
		u.MinHealthyTime = o.MinHealthyTime
	}
	if o.HealthyDeadline != nil {
		u.HealthyDeadline = o.HealthyDeadline
	}
	if o.ProgressDeadline != nil {
		u.ProgressDeadline = o.ProgressDeadline
	}
	if o.Canary != nil {
		u.Canary = o.Canary
	}
	if o.AutoRevert != nil {
		u.AutoRevert = o.AutoRevert
	}
	if o.AutoPromote != nil {
		u.AutoPromote = o.AutoPromote
	}
}

// Canonicalize fills unset fields from DefaultUpdateStrategy.
func (u *UpdateStrategy) Canonicalize() {
	d := DefaultUpdateStrategy()
	d.Merge(u)
	*u = *d
}

// Empty reports whether the strategy sets nothing beyond zero values; an
// empty job-level strategy is not inherited by a group.
func (u *UpdateStrategy) Empty() bool {
	if u == nil {
		return true
	}
	nonZeroDuration := func(d *time.Duration) bool { return d != nil && *d != 0 }
	nonZeroInt := func(i *int) bool { return i != nil && *i != 0 }
	isTrue := func(b *bool) bool { return b != nil && *b }
	switch {
	case nonZeroDuration(u.Stagger), nonZeroDuration(u.MinHealthyTime),
		nonZeroDuration(u.HealthyDeadline), nonZeroDuration(u.ProgressDeadline):
		return false
	case nonZeroInt(u.MaxParallel), nonZeroInt(u.Canary):
		return false
	case u.HealthCheck != nil && *u.HealthCheck != "":
		return false
	case isTrue(u.AutoRevert), isTrue(u.AutoPromote):
		return false
	}
	return true
}
