package structs

import (
	"maps"
	"regexp"
	"strings"
)

// Job types, each run by its own scheduler.
const (
	JobTypeService  = "service"
	JobTypeBatch    = "batch"
	JobTypeSystem   = "system"
	JobTypeSysBatch = "sysbatch"
	JobTypeCore     = "_core"
)

// Job statuses, derived from the job's allocations and evaluations.
const (
	JobStatusPending = "pending"
	JobStatusRunning = "running"
	JobStatusDead    = "dead"
)

// Defaults and limits for jobs.
const (
	DefaultNamespace   = "default"
	DefaultRegion      = "global"
	DefaultNodePool    = "default"
	AllNodePools       = "all"
	JobDefaultPriority = 50
	JobMinPriority     = 1
	JobMaxPriority     = 100
	CoreJobPriority    = JobMaxPriority * 2
	// JobTrackedVersions is how many old versions of a job are kept.
	JobTrackedVersions = 6
)

var validJobID = regexp.MustCompile(`^[^\s\x00/?#%]+$`)

// Job is what a user submits: one or more task groups and the policies that
// say where and how they run. A job is versioned: every change to its
// specification bumps Version and JobModifyIndex.
type Job struct {
	Stop              bool
	Region            string
	Namespace         string
	ID                string
	ParentID          string
	Name              string
	Type              string
	Priority          int
	AllAtOnce         bool
	Datacenters       []string
	NodePool          string
	Constraints       []*Constraint
	Affinities        []*Affinity
	Spreads           []*Spread
	TaskGroups        []*TaskGroup
	Update            UpdateStrategy
	Periodic          *PeriodicConfig
	ParameterizedJob  *ParameterizedJobConfig
	Dispatched        bool
	Payload           []byte
	Meta              map[string]string
	Status            string
	StatusDescription string
	Stable            bool
	Version           uint64
	// SubmitTime (Unix nanoseconds) is stamped by the endpoint that makes
	// the raft entry, from the server's clock; the FSM only copies it.
	SubmitTime     int64
	CreateIndex    uint64
	ModifyIndex    uint64
	JobModifyIndex uint64

	// DispatchIdempotencyToken is the token a dispatch carried: a second
	// dispatch with the same token, while this child is not dead, returns
	// this child instead of dispatching another (as in Nomad). Payload,
	// above, is a dispatched child's payload, stored raw: Nomad keeps it
	// snappy-compressed, but at 16 KiB at most Drover does not compress
	// it. In JSON it is base64, as Nomad's is.
	DispatchIdempotencyToken string
}

// NamespacedID identifies a job (or any namespaced object).
type NamespacedID struct {
	ID        string
	Namespace string
}

// String renders namespace/id.
func (n NamespacedID) String() string { return n.Namespace + "/" + n.ID }

// NamespacedID returns the job's key.
func (j *Job) NamespacedID() NamespacedID { return NamespacedID{ID: j.ID, Namespace: j.Namespace} }

// LookupTaskGroup returns the named group or nil.
func (j *Job) LookupTaskGroup(name string) *TaskGroup {
	if j == nil {
		return nil
	}
	for _, tg := range j.TaskGroups {
		if tg.Name == name {
			return tg
		}
	}
	return nil
}

// Stopped reports whether the job was stopped by the user.
func (j *Job) Stopped() bool { return j == nil || j.Stop }

// IsPeriodic reports whether the job launches children on a schedule.
func (j *Job) IsPeriodic() bool { return j.Periodic != nil && j.Periodic.Enabled }

// IsParameterized reports whether the job is a template for dispatches.
func (j *Job) IsParameterized() bool { return j.ParameterizedJob != nil && !j.Dispatched }

// Canonicalize fills the defaults Nomad fills, per job type, so that every
// server and the scheduler see the same fully specified job.
func (j *Job) Canonicalize() {
	if j.Namespace == "" {
		j.Namespace = DefaultNamespace
	}
	if j.Region == "" {
		j.Region = DefaultRegion
	}
	if j.Name == "" {
		j.Name = j.ID
	}
	if j.Type == "" {
		j.Type = JobTypeService
	}
	if j.Priority == 0 {
		j.Priority = JobDefaultPriority
	}
	if j.NodePool == "" {
		j.NodePool = DefaultNodePool
	}
	if len(j.Datacenters) == 0 {
		j.Datacenters = []string{"*"}
	}
	for _, c := range j.Constraints {
		c.Canonicalize()
	}
	if j.Periodic != nil && j.Periodic.SpecType == "" {
		j.Periodic.SpecType = "cron"
	}
	if j.ParameterizedJob != nil {
		j.ParameterizedJob.canonicalize()
	}
	for _, tg := range j.TaskGroups {
		tg.Canonicalize(j)
	}
}

// Validate returns every problem with the job, each with its field path.
func (j *Job) Validate() error {
	p := newProblems()
	if j.ID == "" {
		p.add("job ID is missing")
	} else if len(j.ID) > 128 {
		p.add("job ID is %d characters long, at most 128 are allowed", len(j.ID))
	} else {
		validateJobID(p, j.ID)
	}
	if j.Name == "" {
		p.add("job name is missing")
	}
	validateNamespace(p, j.Namespace)
	switch j.Type {
	case JobTypeService, JobTypeBatch, JobTypeSystem, JobTypeSysBatch:
	case "":
		p.add("job type is missing")
	default:
		p.add("job type %q is not one of service, batch, system, sysbatch", j.Type)
	}
	if j.Priority < JobMinPriority || j.Priority > JobMaxPriority {
		p.add("job priority %d must be between %d and %d", j.Priority, JobMinPriority, JobMaxPriority)
	}
	if len(j.Datacenters) == 0 {
		p.add("job must list at least one datacenter")
	}
	for i, dc := range j.Datacenters {
		if strings.TrimSpace(dc) == "" {
			p.add("datacenters[%d] is empty", i)
		}
	}
	if len(j.TaskGroups) == 0 {
		p.add("job has no task groups (add a group block)")
	}
	validateEach(p, "constraint", j.Constraints)
	validateEach(p, "affinity", j.Affinities)
	validateEach(p, "spread", j.Spreads)
	if j.Type == JobTypeSystem || j.Type == JobTypeSysBatch {
		if len(j.Spreads) > 0 {
			p.add("%s jobs may not have a spread block", j.Type)
		}
		if len(j.Affinities) > 0 {
			p.add("%s jobs may not have an affinity block", j.Type)
		}
	}
	if j.IsPeriodic() && j.Periodic.Spec == "" && len(j.Periodic.Specs) == 0 {
		p.add("periodic job needs a cron expression")
	}
	validateParameterized(j, p)
	seen := map[string]int{}
	for i, tg := range j.TaskGroups {
		if prev, dup := seen[tg.Name]; dup && tg.Name != "" {
			p.add("group %q is defined twice (groups %d and %d)", tg.Name, prev+1, i+1)
		}
		seen[tg.Name] = i
		tg.validate(j, p.at(`group "`+tg.Name+`"`))
	}
	return p.err()
}

// Copy returns a deep copy.
func (j *Job) Copy() *Job {
	if j == nil {
		return nil
	}
	c := *j
	c.Datacenters = copyStrings(j.Datacenters)
	c.Constraints = copyEach(j.Constraints)
	c.Affinities = copyEach(j.Affinities)
	c.Spreads = copyEach(j.Spreads)
	c.TaskGroups = make([]*TaskGroup, len(j.TaskGroups))
	for i, tg := range j.TaskGroups {
		c.TaskGroups[i] = tg.Copy()
	}
	c.Periodic = j.Periodic.Copy()
	if j.ParameterizedJob != nil {
		pj := *j.ParameterizedJob
		pj.MetaRequired = copyStrings(pj.MetaRequired)
		pj.MetaOptional = copyStrings(pj.MetaOptional)
		c.ParameterizedJob = &pj
	}
	c.Payload = append([]byte(nil), j.Payload...)
	c.Meta = maps.Clone(j.Meta)
	return &c
}

// SpecChanged reports whether the user-facing specification differs from
// other, ignoring the fields the servers maintain (indexes, status, version,
// submit time). An unchanged re-registration creates no new version.
func (j *Job) SpecChanged(other *Job) bool {
	if j == nil || other == nil {
		return j != other
	}
	a, b := j.Copy(), other.Copy()
	for _, x := range []*Job{a, b} {
		x.Status, x.StatusDescription, x.Stable = "", "", false
		x.Version, x.SubmitTime = 0, 0
		x.CreateIndex, x.ModifyIndex, x.JobModifyIndex = 0, 0, 0
	}
	return !deepEqual(a, b)
}

// JobListStub is the summary returned when listing jobs.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
	SubmitTime        int64
	// Meta is the job's own meta, so lists can be filtered on it
	// (?filter=Meta["team"] == "infra"); omitted when empty, as by Nomad.
	Meta map[string]string `json:",omitempty"`
}

// Stub returns the list view of the job with its summary.
func (j *Job) Stub(summary *JobSummary) *JobListStub {
	if summary == nil {
		summary = &JobSummary{JobID: j.ID, Namespace: j.Namespace, Summary: map[string]TaskGroupSummary{}, Children: &JobChildrenSummary{}}
	}
	return &JobListStub{
		ID: j.ID, ParentID: j.ParentID, Name: j.Name, Namespace: j.Namespace,
		Datacenters: j.Datacenters, NodePool: j.NodePool, Type: j.Type, Priority: j.Priority,
		Periodic: j.IsPeriodic(), ParameterizedJob: j.IsParameterized(), Stop: j.Stop,
		Status: j.Status, StatusDescription: j.StatusDescription, JobSummary: summary,
		CreateIndex: j.CreateIndex, ModifyIndex: j.ModifyIndex, JobModifyIndex: j.JobModifyIndex,
		SubmitTime: j.SubmitTime, Meta: j.Meta,
	}
}

// JobSummary counts a job's allocations by client status per group.
type JobSummary struct {
	JobID       string
	Namespace   string
	Summary     map[string]TaskGroupSummary
	Children    *JobChildrenSummary
	CreateIndex uint64
	ModifyIndex uint64
}

// TaskGroupSummary counts one group's allocations.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int
}

// JobChildrenSummary counts a periodic or parameterized job's children.
type JobChildrenSummary struct {
	Pending int64
	Running int64
	Dead    int64
}

// Copy returns a deep copy.
func (s *JobSummary) Copy() *JobSummary {
	if s == nil {
		return nil
	}
	c := *s
	c.Summary = make(map[string]TaskGroupSummary, len(s.Summary))
	for k, v := range s.Summary {
		c.Summary[k] = v
	}
	c.Children = copyPtr(s.Children)
	return &c
}

// JobVersionsResponse lists a job's versions, newest first.
type JobVersionsResponse struct {
	Versions []*Job
	Diffs    []*JobDiff
	QueryMeta
}

// JobDiff is a structured difference between two job versions, in the shape
// `job plan` prints: Type is Added, Deleted, Edited or None.
type JobDiff struct {
	Type       string
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// TaskGroupDiff is a group's part of a JobDiff.
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// TaskDiff is a task's part of a JobDiff.
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// FieldDiff is one changed field.
type FieldDiff struct {
	Type        string
	Name        string
	Old, New    string
	Annotations []string
}

// ObjectDiff is one changed nested block.
type ObjectDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
}

// Diff types.
const (
	DiffTypeNone    = "None"
	DiffTypeAdded   = "Added"
	DiffTypeDeleted = "Deleted"
	DiffTypeEdited  = "Edited"
)
