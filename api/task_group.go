package api

import "time"

// TaskGroup is the unit of scheduling: all tasks of a group are placed
// together on one node, as one allocation, Count times.
type TaskGroup struct {
	Name             *string
	Count            *int
	Constraints      []*Constraint
	Affinities       []*Affinity
	Tasks            []*Task
	Spreads          []*Spread
	Volumes          map[string]*VolumeRequest
	RestartPolicy    *RestartPolicy
	Disconnect       *DisconnectStrategy
	ReschedulePolicy *ReschedulePolicy
	EphemeralDisk    *EphemeralDisk
	Update           *UpdateStrategy
	Migrate          *MigrateStrategy
	Networks         []*NetworkResource
	Meta             map[string]string

	// Services are kept as data: Drover does not register them anywhere,
	// but it carries them so that a job round-trips unchanged.
	Services []*Service

	// ShutdownDelay is how long to wait between deregistering the group's
	// services and killing its tasks.
	ShutdownDelay *time.Duration

	// MaxClientDisconnect is the pre-disconnect-block spelling of
	// Disconnect.LostAfter. Deprecated: use Disconnect.
	MaxClientDisconnect *time.Duration

	// StopAfterClientDisconnect is the pre-disconnect-block spelling of
	// Disconnect.StopOnClientAfter. Deprecated: use Disconnect.
	StopAfterClientDisconnect *time.Duration

	// PreventRescheduleOnLost is the pre-disconnect-block spelling of
	// Disconnect.Replace = false. Deprecated: use Disconnect.
	PreventRescheduleOnLost *bool

	// Scaling bounds the group's count for scaling requests; see
	// ScalingPolicy.
	Scaling *ScalingPolicy
}

// NewTaskGroup returns a group with a name and a count.
func NewTaskGroup(name string, count int) *TaskGroup {
	return &TaskGroup{Name: new(name), Count: new(count)}
}

// Canonicalize fills the group's defaults. Policies may be set on the job,
// on the group, or both; the group's fields win field by field, and what is
// still unset gets the default for the job's type.
func (g *TaskGroup) Canonicalize(job *Job) {
	jobType := JobTypeService
	if job.Type != nil {
		jobType = *job.Type
	}

	if g.Name == nil {
		g.Name = new("")
	}
	if g.Count == nil {
		// A group with a scaling block starts at its minimum, as in Nomad.
		if g.Scaling != nil && g.Scaling.Min != nil {
			g.Count = new(int(*g.Scaling.Min))
		} else {
			g.Count = new(1)
		}
	}
	if g.Scaling != nil {
		g.Scaling.Canonicalize(*g.Count)
	}

	if g.EphemeralDisk == nil {
		g.EphemeralDisk = DefaultEphemeralDisk()
	} else {
		g.EphemeralDisk.Canonicalize()
	}

	// A job-level strategy that sets nothing is not inherited. (After
	// Job.Canonicalize it is never empty; this matters when a group is
	// canonicalized on its own.)
	switch {
	case g.Update != nil && job.Update != nil:
		merged := job.Update.Copy()
		merged.Merge(g.Update)
		g.Update = merged
	case job.Update != nil && !job.Update.Empty():
		g.Update = job.Update.Copy()
	}
	if g.Update != nil {
		g.Update.Canonicalize()
	}

	if job.Reschedule != nil {
		merged := job.Reschedule.Copy()
		merged.Merge(g.ReschedulePolicy)
		g.ReschedulePolicy = merged
	}
	// System and sysbatch allocations are tied to their node, so there is
	// nowhere to reschedule them to.
	if g.ReschedulePolicy == nil && jobType != JobTypeSystem && jobType != JobTypeSysbatch {
		g.ReschedulePolicy = NewDefaultReschedulePolicy(jobType)
	}
	g.ReschedulePolicy.Canonicalize(jobType)

	if job.Migrate != nil {
		merged := job.Migrate.Copy()
		merged.Merge(g.Migrate)
		g.Migrate = merged
	}
	// Only service allocations are migrated off draining nodes with health
	// checking; the others are simply stopped and replaced.
	if g.Migrate == nil && jobType == JobTypeService {
		g.Migrate = &MigrateStrategy{}
	}
	g.Migrate.Canonicalize()

	restart := NewDefaultRestartPolicy(jobType)
	restart.Merge(g.RestartPolicy)
	g.RestartPolicy = restart

	if g.Disconnect != nil {
		g.Disconnect.Canonicalize()
	}

	for _, t := range g.Tasks {
		t.Canonicalize(g, job)
	}
	canonicalizeEach(g.Spreads)
	canonicalizeEach(g.Affinities)
	for _, s := range g.Services {
		s.Canonicalize(nil, g, job)
	}
}
