package nomad

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A client's health verdict for an alloc outside any deployment (judged by
// its group's migrate block) is kept by the servers, and later reports
// without one do not erase it: the drainer reads it to pace migrations.
func TestMigrationHealthReportIsKept(t *testing.T) {
	s, _ := startFakeClockServer(t)
	n := itNode("n1")
	registerNode(t, s, n)
	a := placeOne(t, s, itJob("web", 1))
	if a.DeploymentID != "" {
		t.Fatalf("alloc placed in deployment %q, want none", a.DeploymentID)
	}
	at := time.Unix(1_800_000_100, 0).UTC()
	report := func(ds *structs.AllocDeploymentStatus) {
		t.Helper()
		var resp structs.GenericResponse
		err := s.RPC("Node.UpdateAlloc", &structs.AllocUpdateRequest{NodeID: n.ID, SecretID: n.SecretID,
			Alloc: []*structs.Allocation{{ID: a.ID, NodeID: n.ID, ClientStatus: structs.AllocClientStatusRunning,
				TaskStates: map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning}}, DeploymentStatus: ds}}}, &resp)
		if err != nil {
			t.Fatal(err)
		}
	}
	report(&structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(true), Timestamp: at})
	got := allocNow(t, s, a.ID).DeploymentStatus
	if got == nil || got.Healthy == nil || !*got.Healthy || !got.Timestamp.Equal(at) || got.ModifyIndex == 0 {
		t.Fatalf("deployment status after the verdict = %+v", got)
	}
	report(nil)
	if got := allocNow(t, s, a.ID).DeploymentStatus; got == nil || got.Healthy == nil || !*got.Healthy {
		t.Fatalf("a report without health erased the verdict: %+v", got)
	}
}
