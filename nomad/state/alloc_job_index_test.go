package state

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// The job index keys allocs by deployment within their job: a job's read
// sees every deployment's allocs, a deployment's read only its own, and
// an alloc an in-place update moves to a new deployment moves with it.
func TestAllocJobIndexAnswersJobsAndDeployments(t *testing.T) {
	s := testStateStore(t)
	web := mustJob(t, s, 1, testJob("web"))
	// "web-d1" as a job ID and "d1" as a deployment of "web" would
	// collide in a key that did not end each part.
	other := mustJob(t, s, 2, testJob("web-d1"))
	for _, d := range []*structs.Deployment{
		{ID: "d1", Namespace: "default", JobID: "web"},
		{ID: "d2", Namespace: "default", JobID: "web"},
		{ID: "d3", Namespace: "default", JobID: "web-d1"},
	} {
		mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertDeployment(d) }))
	}
	a1, a2, a3 := testAlloc("a1", web, "n1"), testAlloc("a2", web, "n1"), testAlloc("a3", web, "n2")
	a1.DeploymentID, a2.DeploymentID = "d1", "d2" // a3 has none
	a4 := testAlloc("a4", other, "n1")
	a4.DeploymentID = "d3"
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a1, a2, a3, a4}) }))

	check := func(what string, got []*structs.Allocation, err error, want string) {
		t.Helper()
		mustNoErr(t, err)
		if fmtSet(allocIDs(got)) != want {
			t.Fatalf("%s: got %v, want %s", what, allocIDs(got), want)
		}
	}
	got, err := s.AllocsByJob(nil, "default", "web", true)
	check("job web", got, err, "[a1 a2 a3]")
	got, err = s.AllocsByJob(nil, "default", "web-d1", true)
	check("job web-d1", got, err, "[a4]")
	got, err = s.AllocsByDeployment(nil, "d1")
	check("deployment d1", got, err, "[a1]")
	got, err = s.AllocsByDeployment(nil, "d3")
	check("deployment d3", got, err, "[a4]")

	// An in-place update moves a1 into d2: it leaves d1's entries.
	moved := a1.Copy()
	moved.DeploymentID = "d2"
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{moved}) }))
	got, err = s.AllocsByDeployment(nil, "d1")
	check("d1 after the move", got, err, "[]")
	got, err = s.AllocsByDeployment(nil, "d2")
	check("d2 after the move", got, err, "[a1 a2]")
	got, err = s.AllocsByJob(nil, "default", "web", true)
	check("job web after the move", got, err, "[a1 a2 a3]")

	// A deployment no longer stored is still answered, by a walk.
	a5 := testAlloc("a5", web, "n3")
	a5.DeploymentID = "gone"
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a5}) }))
	got, err = s.AllocsByDeployment(nil, "gone")
	check("a deployment not stored", got, err, "[a5]")
}

func TestAllocJobIndexRefusesBadArguments(t *testing.T) {
	for _, args := range [][]any{{"default"}, {"default", "web", "d1", "x"}, {"default", 7}} {
		if _, err := (allocJobIndex{}).FromArgs(args...); err == nil {
			t.Fatalf("FromArgs(%v) = nil error", args)
		}
	}
}
