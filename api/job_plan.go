package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// JobPlanResponse answers PUT /v1/job/:id/plan: what registering the job
// would do, without doing it.
type JobPlanResponse struct {
	// JobModifyIndex is the job's current modify index, to pass to
	// `job run -check-index` so the run applies only to what was planned.
	JobModifyIndex uint64

	CreatedEvals []*Evaluation

	// Diff is the change from the running version, when asked for.
	Diff *JobDiff

	// Annotations say what the scheduler would do per group.
	Annotations *PlanAnnotations

	// FailedTGAllocs explains, per group, placements that would fail.
	FailedTGAllocs map[string]*AllocationMetric

	// NextPeriodicLaunch is when a periodic job would next launch.
	NextPeriodicLaunch FlexTime

	Warnings string
}

// PlanAnnotations are the scheduler's decisions in a dry run.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []*AllocationListStub
}

// DesiredUpdates counts, for one group, each kind of change a plan makes.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
	Disconnect        uint64
	Reconnect         uint64
	RescheduleNow     uint64
	RescheduleLater   uint64
}

// Diff types used in JobDiff and its parts.
const (
	DiffTypeNone    = "None"
	DiffTypeAdded   = "Added"
	DiffTypeDeleted = "Deleted"
	DiffTypeEdited  = "Edited"
)

// JobDiff is the structured change between two versions of a job.
type JobDiff struct {
	Type       string
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// TaskGroupDiff is one group's part of a JobDiff. Updates counts the
// scheduler's decisions for the group by name ("create", "in-place update").
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// TaskDiff is one task's part of a TaskGroupDiff. Annotations say what the
// change forces, such as "forces create/destroy update".
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// FieldDiff is one changed scalar field.
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

// FlexTime is a time that decodes from either an RFC 3339 string (Nomad's
// API) or integer nanoseconds since the epoch (Drover's servers encode some
// times that way), so a client works against both. It encodes as a string,
// like time.Time.
type FlexTime struct {
	time.Time
}

// UnmarshalJSON accepts a string, a number of nanoseconds, or null.
func (t *FlexTime) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		t.Time = time.Time{}
		return nil
	case len(b) > 0 && b[0] == '"':
		return t.Time.UnmarshalJSON(b)
	}
	var ns int64
	if err := json.Unmarshal(b, &ns); err != nil {
		return fmt.Errorf("time must be a string or integer nanoseconds, got %s", b)
	}
	if ns == 0 {
		t.Time = time.Time{}
	} else {
		t.Time = time.Unix(0, ns).UTC()
	}
	return nil
}

// MarshalJSON encodes like time.Time.
func (t FlexTime) MarshalJSON() ([]byte, error) { return t.Time.MarshalJSON() }
