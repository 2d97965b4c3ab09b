package structs

// JobScaleRequest is Job.Scale: set a task group's count, or, with a nil
// Count, only record a scaling event (an autoscaler reporting that it
// could not act, say). Target names the group ("Group"), and may repeat
// the job ("Job") and namespace ("Namespace"), which must then match
// JobID and the request's namespace. JobModifyIndex, when not zero, makes
// the change conditional on the job's current JobModifyIndex.
// PolicyOverride is accepted for compatibility and ignored: Drover has no
// Sentinel policies.
type JobScaleRequest struct {
	JobID          string
	Target         map[string]string
	Count          *int64
	Message        string
	Error          bool
	Meta           map[string]any
	PolicyOverride bool
	JobModifyIndex uint64
	WriteRequest
}

// JobScaleApplyRequest is the raft entry of a scaling request: everything
// the FSM needs, with the times and IDs the leader chose, so the job's new
// version, its evaluation and the scaling event are written in one
// transaction that every server applies the same way. Count nil records
// only the event. Eval is nil for periodic and parameterized jobs (and
// for an event-only request). The FSM checks the request again against
// the state it applies to, so a job changed since the leader read it is
// not scaled by a stale decision.
type JobScaleApplyRequest struct {
	Namespace      string
	JobID          string
	Group          string
	Count          *int64
	JobModifyIndex uint64
	SubmitTime     int64
	Eval           *Evaluation
	Event          *ScalingEvent
	WriteRequest
}

// ScalingEvent records one scaling request of a group. Count is nil for a
// request that only reports something (an error, a message). EvalID is the
// evaluation the request created, if any. Time is when the leader received
// the request (Unix nanoseconds); CreateIndex is the raft index that
// recorded it.
type ScalingEvent struct {
	Time          int64
	Count         *int64
	PreviousCount int64
	Message       string
	Error         bool
	Meta          map[string]any
	EvalID        *string
	CreateIndex   uint64
}

// Copy returns a deep copy.
func (e *ScalingEvent) Copy() *ScalingEvent {
	if e == nil {
		return nil
	}
	c := *e
	c.Count = copyPtr(e.Count)
	c.EvalID = copyPtr(e.EvalID)
	c.Meta = CopyMapAny(e.Meta)
	return &c
}

// JobScalingEvents is a job's scaling history: per group, the newest
// JobTrackedScalingEvents events, newest first.
type JobScalingEvents struct {
	Namespace     string
	JobID         string
	ScalingEvents map[string][]*ScalingEvent
	ModifyIndex   uint64
}

// Copy returns a copy whose maps and slices may be changed; the events
// themselves are shared, since stored events are never modified.
func (j *JobScalingEvents) Copy() *JobScalingEvents {
	if j == nil {
		return nil
	}
	c := *j
	c.ScalingEvents = make(map[string][]*ScalingEvent, len(j.ScalingEvents))
	for g, evs := range j.ScalingEvents {
		c.ScalingEvents[g] = append([]*ScalingEvent(nil), evs...)
	}
	return &c
}

// JobScaleStatusRequest asks for a job's scaling status.
type JobScaleStatusRequest struct {
	JobID string
	QueryOptions
}

// JobScaleStatusResponse answers Job.ScaleStatus; JobScaleStatus is nil if
// the job does not exist.
type JobScaleStatusResponse struct {
	JobScaleStatus *JobScaleStatus
	QueryMeta
}

// JobScaleStatus is what GET /v1/job/:id/scale answers, in Nomad's shape.
// JobModifyIndex is the job's JobModifyIndex, the value a conditional
// scaling request compares against.
type JobScaleStatus struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]*TaskGroupScaleStatus
}

// TaskGroupScaleStatus counts a group's allocations against its desired
// count. Placed counts the non-terminal allocations, Running those whose
// client reports them running, Healthy and Unhealthy those whose
// deployment health is known. Canaries are left out, as in Nomad.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []*ScalingEvent
}
