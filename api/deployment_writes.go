package api

// The deployment writes, as Nomad's client has them.

// DeploymentUpdateResponse answers a deployment write.
type DeploymentUpdateResponse struct {
	EvalID                string
	EvalCreateIndex       uint64
	DeploymentModifyIndex uint64
	// RevertedJobVersion is the job version an auto-revert went back to.
	RevertedJobVersion *uint64
	WriteMeta
}

// DeploymentPromoteRequest promotes every group's canaries (All) or the
// named Groups'.
type DeploymentPromoteRequest struct {
	DeploymentID string
	All          bool
	Groups       []string
}

// DeploymentPauseRequest pauses or resumes a deployment.
type DeploymentPauseRequest struct {
	DeploymentID string
	Pause        bool
}

// DeploymentAllocHealthRequest sets allocs' health by hand.
type DeploymentAllocHealthRequest struct {
	DeploymentID           string
	HealthyAllocationIDs   []string
	UnhealthyAllocationIDs []string
}

// deploymentIDRequest is the body of fail and unblock.
type deploymentIDRequest struct {
	DeploymentID string
}

func (d *Deployments) update(verb, id string, in any, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return putOne[DeploymentUpdateResponse](d.c, "/v1/deployment/"+verb+"/"+escape(id), in, w)
}

// Fail fails a deployment (a group with auto_revert rolls the job back).
func (d *Deployments) Fail(deploymentID string, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("fail", deploymentID, &deploymentIDRequest{DeploymentID: deploymentID}, w)
}

// Pause pauses a running deployment, or resumes a paused one.
func (d *Deployments) Pause(deploymentID string, pause bool, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("pause", deploymentID, &DeploymentPauseRequest{DeploymentID: deploymentID, Pause: pause}, w)
}

// PromoteAll promotes the canaries of every group.
func (d *Deployments) PromoteAll(deploymentID string, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("promote", deploymentID, &DeploymentPromoteRequest{DeploymentID: deploymentID, All: true}, w)
}

// PromoteGroups promotes the canaries of the named groups.
func (d *Deployments) PromoteGroups(deploymentID string, groups []string, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("promote", deploymentID, &DeploymentPromoteRequest{DeploymentID: deploymentID, Groups: groups}, w)
}

// Unblock moves a blocked deployment on.
func (d *Deployments) Unblock(deploymentID string, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("unblock", deploymentID, &deploymentIDRequest{DeploymentID: deploymentID}, w)
}

// SetAllocHealth marks allocs of a deployment healthy or unhealthy by hand.
func (d *Deployments) SetAllocHealth(deploymentID string, healthy, unhealthy []string, w *WriteOptions) (*DeploymentUpdateResponse, *WriteMeta, error) {
	return d.update("allocation-health", deploymentID, &DeploymentAllocHealthRequest{
		DeploymentID: deploymentID, HealthyAllocationIDs: healthy, UnhealthyAllocationIDs: unhealthy}, w)
}
