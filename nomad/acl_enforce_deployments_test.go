package nomad

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// Deployment writes need submit-job in the deployment's namespace, its
// allocation list read-job; a refused write changes nothing.
func TestDeploymentWritesNeedSubmitJobInTheirNamespace(t *testing.T) {
	t.Parallel()
	w := newACLWorld(t)
	s := w.s
	dep := w.deployment["default"]
	pause := func(token string, p bool) error {
		args := &structs.DeploymentPauseRequest{DeploymentID: dep, Pause: p, WriteRequest: write(token)}
		var out structs.DeploymentUpdateResponse
		return userRPC(s, "Deployment.Pause", args, &out)
	}
	status := func() string {
		d, err := s.State().DeploymentByID(nil, dep)
		if err != nil || d == nil {
			t.Fatalf("deployment %s: %v", dep, err)
		}
		return d.Status
	}
	for name, token := range map[string]string{"a reader": w.secret["reader"], "a writer elsewhere": w.secret["elsewhere"], "no token": ""} {
		requireDenied(t, name+" pausing", pause(token, true))
		var out structs.DeploymentUpdateResponse
		requireDenied(t, name+" failing", userRPC(s, "Deployment.Fail",
			&structs.DeploymentFailRequest{DeploymentID: dep, WriteRequest: write(token)}, &out))
		requireDenied(t, name+" promoting", userRPC(s, "Deployment.Promote",
			&structs.DeploymentPromoteRequest{DeploymentID: dep, All: true, WriteRequest: write(token)}, &out))
		requireDenied(t, name+" setting health", userRPC(s, "Deployment.SetAllocHealth",
			&structs.DeploymentAllocHealthRequest{DeploymentID: dep, HealthyAllocationIDs: []string{"x"}, WriteRequest: write(token)}, &out))
		if got := status(); got != structs.DeploymentStatusRunning {
			t.Fatalf("after %s was refused the deployment is %s", name, got)
		}
	}
	if err := pause(w.secret["writer"], true); err != nil {
		t.Fatalf("a writer pausing: %v", err)
	}
	if got := status(); got != structs.DeploymentStatusPaused {
		t.Fatalf("after pausing: %s", got)
	}
	if err := pause(w.mgmt, false); err != nil {
		t.Fatalf("management resuming: %v", err)
	}

	allocs := func(token string) error {
		args := &structs.DeploymentSpecificRequest{DeploymentID: dep, QueryOptions: query(token)}
		var out structs.DeploymentAllocsResponse
		return userRPC(s, "Deployment.Allocations", args, &out)
	}
	if err := allocs(w.secret["reader"]); err != nil {
		t.Fatalf("a reader listing the deployment's allocs: %v", err)
	}
	requireDenied(t, "a reader elsewhere listing the deployment's allocs", allocs(w.secret["elsewhere"]))
}
