package api

import "time"

// Deployment statuses.
const (
	DeploymentStatusRunning    = "running"
	DeploymentStatusPaused     = "paused"
	DeploymentStatusFailed     = "failed"
	DeploymentStatusSuccessful = "successful"
	DeploymentStatusCancelled  = "cancelled"
	DeploymentStatusPending    = "pending"
	DeploymentStatusBlocked    = "blocked"
)

// Deployment tracks the rollout of one job version.
type Deployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	IsMultiregion      bool
	TaskGroups         map[string]*DeploymentState
	Status             string
	StatusDescription  string
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64
}

// Active reports whether the deployment can still make progress.
func (d *Deployment) Active() bool {
	switch d.Status {
	case DeploymentStatusRunning, DeploymentStatusPaused, DeploymentStatusPending, DeploymentStatusBlocked:
		return true
	}
	return false
}

// DeploymentState is one group's progress in a deployment.
type DeploymentState struct {
	PlacedCanaries    []string
	AutoRevert        bool
	AutoPromote       bool
	ProgressDeadline  time.Duration
	RequireProgressBy time.Time
	Promoted          bool
	DesiredCanaries   int
	DesiredTotal      int
	PlacedAllocs      int
	HealthyAllocs     int
	UnhealthyAllocs   int
}

// Deployments is the /v1/deployments and /v1/deployment/:id family.
type Deployments struct{ c *Client }

// Deployments returns the deployment endpoints.
func (c *Client) Deployments() *Deployments { return &Deployments{c: c} }

// List lists deployments.
func (d *Deployments) List(q *QueryOptions) ([]*Deployment, *QueryMeta, error) {
	return queryList[*Deployment](d.c, "/v1/deployments", q)
}

// PrefixList lists deployments whose ID starts with prefix.
func (d *Deployments) PrefixList(prefix string) ([]*Deployment, *QueryMeta, error) {
	return d.List(&QueryOptions{Prefix: prefix})
}

// Info reads one deployment.
func (d *Deployments) Info(deploymentID string, q *QueryOptions) (*Deployment, *QueryMeta, error) {
	return queryOne[Deployment](d.c, "/v1/deployment/"+escape(deploymentID), q)
}

// Allocations lists a deployment's allocations.
func (d *Deployments) Allocations(deploymentID string, q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	return queryList[*AllocationListStub](d.c, "/v1/deployment/allocations/"+escape(deploymentID), q)
}
