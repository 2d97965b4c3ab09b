package api

import "time"

// MigrateStrategy says how allocations leave a draining node: how many at a
// time, and what makes a replacement healthy enough to move the next one.
type MigrateStrategy struct {
	MaxParallel *int

	// HealthCheck is "checks" (service checks must pass) or "task_states"
	// (tasks must be running).
	HealthCheck     *string
	MinHealthyTime  *time.Duration
	HealthyDeadline *time.Duration
}

// DefaultMigrateStrategy returns the strategy of a service group that sets
// none.
func DefaultMigrateStrategy() *MigrateStrategy {
	return &MigrateStrategy{
		MaxParallel:     new(1),
		HealthCheck:     new("checks"),
		MinHealthyTime:  new(10 * time.Second),
		HealthyDeadline: new(5 * time.Minute),
	}
}

// Copy returns a shallow copy; see ReschedulePolicy.Copy.
func (m *MigrateStrategy) Copy() *MigrateStrategy {
	return copyPtr(m)
}

// Merge overwrites m's fields with the ones o sets. A nil o changes nothing.
func (m *MigrateStrategy) Merge(o *MigrateStrategy) {
	if o == nil {
		return
	}
	if o.MaxParallel != nil {
		m.MaxParallel = o.MaxParallel
	}
	if o.HealthCheck != nil {
		m.HealthCheck = o.HealthCheck
	}
	if o.MinHealthyTime != nil {
		m.MinHealthyTime = o.MinHealthyTime
	}
	if o.HealthyDeadline != nil {
		m.HealthyDeadline = o.HealthyDeadline
	}
}

// Canonicalize fills unset fields from DefaultMigrateStrategy. It accepts a
// nil receiver (groups of non-service jobs have no strategy).
func (m *MigrateStrategy) Canonicalize() {
	if m == nil {
		return
	}
	d := DefaultMigrateStrategy()
	d.Merge(m)
	*m = *d
}
