package api

// Job types. The scheduler picks the algorithm from the type: service and
// batch are placed by the generic scheduler, system and sysbatch run once on
// every eligible node.
const (
	// JobTypeService is a long-running job that is restarted and
	// rescheduled until it is stopped.
	JobTypeService = "service"

	// JobTypeBatch runs to completion; finished allocations are not replaced.
	JobTypeBatch = "batch"

	// JobTypeSystem runs one allocation per eligible node for as long as the
	// job exists.
	JobTypeSystem = "system"

	// JobTypeSysbatch runs one allocation per eligible node to completion.
	JobTypeSysbatch = "sysbatch"
)

// Defaults applied by Canonicalize when a job leaves the field unset.
const (
	// JobDefaultPriority is the priority of a job that does not set one.
	JobDefaultPriority = 50

	// DefaultNamespace is the namespace of a job that does not set one.
	DefaultNamespace = "default"

	// GlobalRegion is the region of a job that does not set one.
	GlobalRegion = "global"

	// NodePoolDefault is the node pool of a job that does not set one.
	NodePoolDefault = "default"
)

// Job is the unit a user submits: a set of task groups plus the policies
// that say where and how they run. The JSON form is the body of
// PUT /v1/jobs (wrapped in JobRegisterRequest) and the answer of
// GET /v1/job/:id.
type Job struct {
	// Fields a job file sets.

	Region           *string
	Namespace        *string
	ID               *string
	Name             *string
	Type             *string
	Priority         *int
	AllAtOnce        *bool
	Datacenters      []string
	NodePool         *string
	Constraints      []*Constraint
	Affinities       []*Affinity
	TaskGroups       []*TaskGroup
	Update           *UpdateStrategy
	Spreads          []*Spread
	Periodic         *PeriodicConfig
	ParameterizedJob *ParameterizedJobConfig
	Reschedule       *ReschedulePolicy
	Migrate          *MigrateStrategy
	Meta             map[string]string

	// Fields the servers set; a job file cannot.

	Stop                     *bool
	ParentID                 *string
	Dispatched               bool
	DispatchIdempotencyToken *string
	Payload                  []byte
	Status                   *string
	StatusDescription        *string
	Stable                   *bool
	Version                  *uint64
	SubmitTime               *int64
	CreateIndex              *uint64
	ModifyIndex              *uint64
	JobModifyIndex           *uint64
}

// IsPeriodic reports whether the job launches children on a cron schedule.
func (j *Job) IsPeriodic() bool {
	return j.Periodic != nil
}

// IsParameterized reports whether the job is a template that runs only when
// dispatched. A dispatched child carries its parent's parameterized block but
// is itself a normal job, hence the Dispatched check.
func (j *Job) IsParameterized() bool {
	return j.ParameterizedJob != nil && !j.Dispatched
}

// LookupTaskGroup returns the group with the given name, or nil.
func (j *Job) LookupTaskGroup(name string) *TaskGroup {
	for _, tg := range j.TaskGroups {
		if tg.Name != nil && *tg.Name == name {
			return tg
		}
	}
	return nil
}

// Canonicalize fills every unset field with its default, the same defaults
// Nomad applies, so that servers, the scheduler and diffs never have to ask
// "was this set?". Job-level update, reschedule and migrate blocks are merged
// into each group, because groups are what the scheduler works with.
//
// Canonicalize is idempotent. Unlike Nomad's client, which leaves the node
// pool empty for the server to resolve per namespace, Drover has no
// per-namespace pools and resolves it to "default" here.
func (j *Job) Canonicalize() {
	if j.ID == nil {
		j.ID = new("")
	}
	if j.Name == nil {
		j.Name = new(*j.ID)
	}
	if j.ParentID == nil {
		j.ParentID = new("")
	}
	if j.Namespace == nil {
		j.Namespace = new(DefaultNamespace)
	}
	if j.Region == nil {
		j.Region = new(GlobalRegion)
	}
	if j.Type == nil {
		j.Type = new(JobTypeService)
	}
	if j.Priority == nil {
		j.Priority = new(JobDefaultPriority)
	}
	if j.NodePool == nil || *j.NodePool == "" {
		j.NodePool = new(NodePoolDefault)
	}
	if j.AllAtOnce == nil {
		j.AllAtOnce = new(false)
	}
	if j.Stop == nil {
		j.Stop = new(false)
	}
	if j.Status == nil {
		j.Status = new("")
	}
	if j.StatusDescription == nil {
		j.StatusDescription = new("")
	}
	if j.Stable == nil {
		j.Stable = new(false)
	}
	if j.Version == nil {
		j.Version = new(uint64(0))
	}
	if j.CreateIndex == nil {
		j.CreateIndex = new(uint64(0))
	}
	if j.ModifyIndex == nil {
		j.ModifyIndex = new(uint64(0))
	}
	if j.JobModifyIndex == nil {
		j.JobModifyIndex = new(uint64(0))
	}

	if j.Periodic != nil {
		j.Periodic.Canonicalize()
	}

	// Only jobs that run indefinitely get a rolling update by default; a
	// batch job has nothing to roll.
	switch {
	case j.Update != nil:
		j.Update.Canonicalize()
	case *j.Type == JobTypeService || *j.Type == JobTypeSystem:
		j.Update = DefaultUpdateStrategy()
	}

	for _, tg := range j.TaskGroups {
		tg.Canonicalize(j)
	}
	canonicalizeEach(j.Spreads)
	canonicalizeEach(j.Affinities)
}
