package api

// Scaling a job group: /v1/job/:id/scale, in Nomad's shapes, so the same
// calls work against Drover and Nomad.

// Scaling target keys of ScalingRequest.Target.
const (
	ScalingTargetNamespace = "Namespace"
	ScalingTargetJob       = "Job"
	ScalingTargetGroup     = "Group"
)

// ScalingRequest is the body of PUT /v1/job/:id/scale. Target["Group"]
// names the group; Count is its new count, or nil to only record an
// event (with Error, for an autoscaler reporting a failure). A non-zero
// JobModifyIndex makes the change conditional on the job's current
// JobModifyIndex. PolicyOverride is accepted and ignored.
type ScalingRequest struct {
	Count          *int64
	Target         map[string]string
	Message        string
	Error          bool
	Meta           map[string]any
	PolicyOverride bool
	JobModifyIndex uint64
	WriteRequest
}

// JobScaleStatusResponse is a job's scaling status (GET /v1/job/:id/scale).
type JobScaleStatusResponse struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]TaskGroupScaleStatus
}

// TaskGroupScaleStatus is one group's desired count, its allocations
// (placed, running, and healthy or unhealthy where a deployment judged
// them) and its recent scaling events, newest first.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []ScalingEvent
}

// ScalingEvent is one recorded scaling request. Count is nil for a
// request that changed no count; EvalID is the evaluation it created, if
// any; Time is in Unix nanoseconds.
type ScalingEvent struct {
	Count         *int64
	PreviousCount int64
	Error         bool
	Message       string
	Meta          map[string]any
	EvalID        *string
	Time          uint64
	CreateIndex   uint64
}

// Scale sets a group's count (nil: record an event only) with a message,
// an error flag and metadata for the scaling event, as Nomad's
// Jobs().Scale does.
func (j *Jobs) Scale(jobID, group string, count *int, message string, isError bool, meta map[string]any, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	var c *int64
	if count != nil {
		c = new(int64(*count))
	}
	return j.ScaleWithRequest(jobID, &ScalingRequest{
		Count:   c,
		Target:  map[string]string{ScalingTargetJob: jobID, ScalingTargetGroup: group},
		Message: message,
		Error:   isError,
		Meta:    meta,
	}, w)
}

// ScaleWithRequest sends a full scaling request.
func (j *Jobs) ScaleWithRequest(jobID string, req *ScalingRequest, w *WriteOptions) (*JobRegisterResponse, *WriteMeta, error) {
	return putOne[JobRegisterResponse](j.c, "/v1/job/"+escape(jobID)+"/scale", req, w)
}

// ScaleStatus reads a job's scaling status, a blocking query.
func (j *Jobs) ScaleStatus(jobID string, q *QueryOptions) (*JobScaleStatusResponse, *QueryMeta, error) {
	return queryOne[JobScaleStatusResponse](j.c, "/v1/job/"+escape(jobID)+"/scale", q)
}
