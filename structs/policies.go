package structs

import (
	"time"
)

// Restart modes: after the attempts are used up, "fail" fails the alloc and
// "delay" waits out the interval and starts counting again.
const (
	RestartPolicyModeFail  = "fail"
	RestartPolicyModeDelay = "delay"
)

// RestartPolicy is the `restart` block: how the client restarts a failed
// task in place before it reports the allocation failed.
type RestartPolicy struct {
	Attempts        int
	Interval        time.Duration
	Delay           time.Duration
	Mode            string
	RenderTemplates bool
}

// DefaultRestartPolicy returns Nomad's defaults for a job type.
func DefaultRestartPolicy(jobType string) *RestartPolicy {
	if jobType == JobTypeBatch || jobType == JobTypeSysBatch {
		return &RestartPolicy{Attempts: 3, Interval: 24 * time.Hour, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
	}
	return &RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: RestartPolicyModeFail}
}

// Copy returns a copy.
func (r *RestartPolicy) Copy() *RestartPolicy {
	return copyPtr(r)
}

func (r *RestartPolicy) validate(p problems) {
	if r.Mode != RestartPolicyModeFail && r.Mode != RestartPolicyModeDelay {
		p.add("restart.mode %q must be %q or %q", r.Mode, RestartPolicyModeFail, RestartPolicyModeDelay)
	}
	if r.Attempts < 0 {
		p.add("restart.attempts must be >= 0, got %d", r.Attempts)
	}
	if r.Delay < 0 {
		p.add("restart.delay must be >= 0")
	}
	if r.Attempts > 0 && r.Interval <= 0 {
		p.add("restart.interval must be > 0 when attempts is set")
	}
	if r.Attempts > 0 && r.Interval > 0 && time.Duration(r.Attempts)*r.Delay > r.Interval {
		p.add("restart: %d attempts with delay %s do not fit in interval %s", r.Attempts, r.Delay, r.Interval)
	}
}

// Reschedule delay functions.
const (
	DelayFunctionConstant    = "constant"
	DelayFunctionExponential = "exponential"
	DelayFunctionFibonacci   = "fibonacci"
)

// ReschedulePolicy is the `reschedule` block: how the scheduler replaces a
// failed allocation on another node.
type ReschedulePolicy struct {
	Attempts      int
	Interval      time.Duration
	Delay         time.Duration
	DelayFunction string
	MaxDelay      time.Duration
	Unlimited     bool
}

// DefaultReschedulePolicy returns Nomad's defaults for a job type; system
// jobs are never rescheduled.
func DefaultReschedulePolicy(jobType string) *ReschedulePolicy {
	switch jobType {
	case JobTypeService:
		return &ReschedulePolicy{Delay: 30 * time.Second, DelayFunction: DelayFunctionExponential, MaxDelay: time.Hour, Unlimited: true}
	case JobTypeBatch:
		return &ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: DelayFunctionConstant}
	}
	return nil
}

// Enabled reports whether the policy allows any rescheduling.
func (r *ReschedulePolicy) Enabled() bool {
	return r != nil && (r.Unlimited || (r.Attempts > 0 && r.Interval > 0))
}

// Copy returns a copy.
func (r *ReschedulePolicy) Copy() *ReschedulePolicy {
	return copyPtr(r)
}

func (r *ReschedulePolicy) validate(p problems) {
	switch r.DelayFunction {
	case DelayFunctionConstant, DelayFunctionExponential, DelayFunctionFibonacci:
	default:
		p.add("reschedule.delay_function %q must be constant, exponential or fibonacci", r.DelayFunction)
	}
	if r.Attempts < 0 {
		p.add("reschedule.attempts must be >= 0")
	}
	if r.Delay < 0 {
		p.add("reschedule.delay must be >= 0")
	}
	if r.Unlimited && r.Attempts > 0 {
		p.add("reschedule: attempts must be 0 when unlimited is true")
	}
	if !r.Unlimited && r.Attempts > 0 && r.Interval <= 0 {
		p.add("reschedule.interval must be > 0 when attempts is set")
	}
	if r.DelayFunction != DelayFunctionConstant && r.MaxDelay > 0 && r.MaxDelay < r.Delay {
		p.add("reschedule.max_delay %s must be >= delay %s", r.MaxDelay, r.Delay)
	}
}

// Disconnect reconcile strategies: which of an original allocation and its
// replacement survives when a disconnected node comes back.
const (
	ReconcileBestScore       = "best_score"
	ReconcileKeepOriginal    = "keep_original"
	ReconcileKeepReplacement = "keep_replacement"
	ReconcileLongestRunning  = "longest_running"
)

// DisconnectStrategy is the group `disconnect` block. LostAfter > 0 lets a
// node's allocations stay `unknown` that long before they are `lost`;
// Replace says whether a replacement is placed meanwhile; Reconcile picks the
// survivor on reconnect; StopOnClientAfter makes the client stop the
// allocations itself when it cannot reach the servers that long.
type DisconnectStrategy struct {
	LostAfter         time.Duration
	Replace           *bool
	Reconcile         string
	StopOnClientAfter *time.Duration
}

// Copy returns a copy.
func (d *DisconnectStrategy) Copy() *DisconnectStrategy {
	if d == nil {
		return nil
	}
	c := *d
	if d.Replace != nil {
		c.Replace = boolPtr(*d.Replace)
	}
	c.StopOnClientAfter = copyPtr(d.StopOnClientAfter)
	return &c
}

// Canonicalize fills defaults: replace true, reconcile best_score.
func (d *DisconnectStrategy) Canonicalize() {
	if d.Replace == nil {
		d.Replace = boolPtr(true)
	}
	if d.Reconcile == "" {
		d.Reconcile = ReconcileBestScore
	}
}

// ShouldReplace reports whether a replacement is placed for an alloc that is
// disconnected or lost. A nil strategy replaces.
func (d *DisconnectStrategy) ShouldReplace() bool {
	return d == nil || d.Replace == nil || *d.Replace
}

// ReconcileStrategy returns the reconcile policy, defaulting to best_score.
func (d *DisconnectStrategy) ReconcileStrategy() string {
	if d == nil || d.Reconcile == "" {
		return ReconcileBestScore
	}
	return d.Reconcile
}

func (d *DisconnectStrategy) validate(p problems) {
	if d.LostAfter < 0 {
		p.add("disconnect.lost_after must be >= 0")
	}
	if d.StopOnClientAfter != nil && *d.StopOnClientAfter <= 0 {
		p.add("disconnect.stop_on_client_after must be > 0")
	}
	if d.LostAfter > 0 && d.StopOnClientAfter != nil {
		p.add("disconnect: lost_after and stop_on_client_after cannot both be set (a client that stops its work cannot reconnect it)")
	}
	switch d.Reconcile {
	case "", ReconcileBestScore, ReconcileKeepOriginal, ReconcileKeepReplacement, ReconcileLongestRunning:
	default:
		p.add("disconnect.reconcile %q must be best_score, keep_original, keep_replacement or longest_running", d.Reconcile)
	}
}

// MigrateStrategy is the group `migrate` block, used when a node drains.
type MigrateStrategy struct {
	MaxParallel     int
	HealthCheck     string
	MinHealthyTime  time.Duration
	HealthyDeadline time.Duration
}

// DefaultMigrateStrategy returns Nomad's defaults.
func DefaultMigrateStrategy() *MigrateStrategy {
	return &MigrateStrategy{MaxParallel: 1, HealthCheck: UpdateHealthCheckChecks, MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute}
}

// Copy returns a copy.
func (m *MigrateStrategy) Copy() *MigrateStrategy {
	return copyPtr(m)
}

// Update health check modes.
const (
	UpdateHealthCheckChecks     = "checks"
	UpdateHealthCheckTaskStates = "task_states"
	UpdateHealthCheckManual     = "manual"
)

// UpdateStrategy is the `update` block: how a changed job is rolled out.
type UpdateStrategy struct {
	Stagger          time.Duration
	MaxParallel      int
	HealthCheck      string
	MinHealthyTime   time.Duration
	HealthyDeadline  time.Duration
	ProgressDeadline time.Duration
	AutoRevert       bool
	AutoPromote      bool
	Canary           int
}

// DefaultUpdateStrategy returns Nomad's defaults for service jobs.
func DefaultUpdateStrategy() *UpdateStrategy {
	return &UpdateStrategy{
		Stagger: 30 * time.Second, MaxParallel: 1, HealthCheck: UpdateHealthCheckChecks,
		MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute, ProgressDeadline: 10 * time.Minute,
	}
}

// Copy returns a copy.
func (u *UpdateStrategy) Copy() *UpdateStrategy {
	return copyPtr(u)
}

// Rolling reports whether the strategy limits how many allocs change at once.
func (u *UpdateStrategy) Rolling() bool { return u != nil && u.MaxParallel > 0 }

func (u *UpdateStrategy) validate(p problems) {
	if u.MaxParallel < 0 {
		p.add("update.max_parallel must be >= 0")
	}
	if u.Canary < 0 {
		p.add("update.canary must be >= 0")
	}
	switch u.HealthCheck {
	case "", UpdateHealthCheckChecks, UpdateHealthCheckTaskStates, UpdateHealthCheckManual:
	default:
		p.add("update.health_check %q must be checks, task_states or manual", u.HealthCheck)
	}
	if u.HealthyDeadline > 0 && u.MinHealthyTime >= u.HealthyDeadline {
		p.add("update.min_healthy_time %s must be less than healthy_deadline %s", u.MinHealthyTime, u.HealthyDeadline)
	}
}

// PeriodicConfig is the `periodic` block.
type PeriodicConfig struct {
	Enabled         bool
	Spec            string
	Specs           []string
	SpecType        string
	ProhibitOverlap bool
	TimeZone        string
}

// Copy returns a copy.
func (p *PeriodicConfig) Copy() *PeriodicConfig {
	if p == nil {
		return nil
	}
	c := *p
	c.Specs = copyStrings(p.Specs)
	return &c
}

// ParameterizedJobConfig is the `parameterized` block.
type ParameterizedJobConfig struct {
	Payload      string
	MetaRequired []string
	MetaOptional []string
}

// EphemeralDisk is the group `ephemeral_disk` block.
type EphemeralDisk struct {
	Sticky  bool
	SizeMB  int
	Migrate bool
}

// DefaultEphemeralDisk returns the 300 MB default.
func DefaultEphemeralDisk() *EphemeralDisk { return &EphemeralDisk{SizeMB: DefaultDiskMB} }

// LogConfig is the task `logs` block: rotation of stdout/stderr files.
type LogConfig struct {
	MaxFiles      int
	MaxFileSizeMB int
	Disabled      bool
}

// DefaultLogConfig returns 10 files of 10 MB.
func DefaultLogConfig() *LogConfig { return &LogConfig{MaxFiles: 10, MaxFileSizeMB: 10} }
