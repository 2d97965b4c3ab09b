package structs

// Deployment status descriptions, as Nomad words them, so that people and
// tools that read them see the same text.
const (
	DeploymentStatusDescriptionRunning               = "Deployment is running"
	DeploymentStatusDescriptionRunningNeedsPromotion = "Deployment is running but requires manual promotion"
	DeploymentStatusDescriptionRunningAutoPromotion  = "Deployment is running pending automatic promotion"
	DeploymentStatusDescriptionPaused                = "Deployment is paused"
	DeploymentStatusDescriptionSuccessful            = "Deployment completed successfully"
	DeploymentStatusDescriptionStoppedJob            = "Cancelled because job is stopped"
	DeploymentStatusDescriptionNewerJob              = "Cancelled due to newer version of job"
	DeploymentStatusDescriptionFailedAllocations     = "Failed due to unhealthy allocations"
	DeploymentStatusDescriptionProgressDeadline      = "Failed due to progress deadline"
	DeploymentStatusDescriptionFailedByUser          = "Deployment marked as failed"
	DeploymentStatusDescriptionUnblocked             = "Deployment was unblocked"
)

// DeploymentStatusDescriptionRollback is a failure description followed by
// the job version the deployment rolls back to.
func DeploymentStatusDescriptionRollback(base string, version uint64) string {
	return base + " - rolling back to job version " + itoa(int(version))
}

// DeploymentStatusDescriptionNoRollbackTarget is a failure description
// that says auto-revert found no stable version to go back to.
func DeploymentStatusDescriptionNoRollbackTarget(base string) string {
	return base + " - no stable job version to auto revert to"
}

// DeploymentPromoteRequest is both the user's promote request (RPC) and
// the raft entry that applies it: promote every group with canaries (All)
// or the named Groups, with the eval that places the rest. UpdatedAt is the
// leader's clock when the entry was made.
type DeploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
	Eval         *Evaluation
	UpdatedAt    int64
	WriteRequest
}

// DeploymentPauseRequest pauses a deployment or resumes a paused one.
type DeploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
	WriteRequest
}

// DeploymentFailRequest fails a deployment by hand.
type DeploymentFailRequest struct {
	DeploymentID string
	WriteRequest
}

// DeploymentUnblockRequest moves a blocked deployment on.
type DeploymentUnblockRequest struct {
	DeploymentID string
	WriteRequest
}

// DeploymentAllocHealthRequest is a user's manual health verdict on a
// deployment's allocations (health_check = "manual").
type DeploymentAllocHealthRequest struct {
	DeploymentID           string
	HealthyAllocationIDs   []string
	UnhealthyAllocationIDs []string
	WriteRequest
}

// ApplyDeploymentAllocHealthRequest is the raft entry for allocation
// health set by a user or by the watcher: the verdicts, stamped with
// Timestamp (the leader's clock, so every server records the same time),
// and, in the same write, the deployment status change it causes, the job
// version an auto-revert registers, and the eval that acts on it.
type ApplyDeploymentAllocHealthRequest struct {
	DeploymentAllocHealthRequest
	Timestamp        int64
	DeploymentUpdate *DeploymentStatusUpdate
	Job              *Job
	Eval             *Evaluation
}

// DeploymentUpdateResponse answers a deployment write, as Nomad's does.
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	// RevertedJobVersion is the version an auto-revert went back to, if any.
	RevertedJobVersion *uint64
	WriteMeta
}

// DeploymentAllocsResponse lists a deployment's allocations.
type DeploymentAllocsResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}
