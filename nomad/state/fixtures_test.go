package state

import (
	"fmt"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// Small builders for tests. IDs are deterministic so failures are easy to
// read and tests never depend on randomness.

func testJob(id string, groups ...string) *structs.Job {
	if len(groups) == 0 {
		groups = []string{"web"}
	}
	j := &structs.Job{
		ID: id, Name: id, Namespace: structs.DefaultNamespace, Region: structs.DefaultRegion,
		Type: structs.JobTypeService, Priority: 50, Datacenters: []string{"dc1"},
		NodePool: structs.DefaultNodePool,
	}
	for _, g := range groups {
		j.TaskGroups = append(j.TaskGroups, &structs.TaskGroup{Name: g, Count: 1})
	}
	return j
}

func testBatchJob(id string) *structs.Job {
	j := testJob(id)
	j.Type = structs.JobTypeBatch
	return j
}

func testNode(id string) *structs.Node {
	return &structs.Node{
		ID: id, SecretID: "secret-" + id, Name: "node-" + id, Datacenter: "dc1",
		NodePool: structs.DefaultNodePool, Status: structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
}

func testAlloc(id string, job *structs.Job, nodeID string) *structs.Allocation {
	return &structs.Allocation{
		ID: id, Namespace: job.Namespace, EvalID: "eval-" + id, Name: structs.AllocName(job.ID, job.TaskGroups[0].Name, 0),
		NodeID: nodeID, JobID: job.ID, Job: job, TaskGroup: job.TaskGroups[0].Name,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
	}
}

func testEval(id string, job *structs.Job) *structs.Evaluation {
	return &structs.Evaluation{
		ID: id, Namespace: job.Namespace, Priority: job.Priority, Type: job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister, JobID: job.ID, Status: structs.EvalStatusPending,
	}
}

// mustJob registers job at index and returns the stored copy.
func mustJob(t *testing.T, s *StateStore, index uint64, job *structs.Job) *structs.Job {
	t.Helper()
	if err := s.Write(index, func(tx *Txn) error { return tx.UpsertJob(job) }); err != nil {
		t.Fatalf("UpsertJob: %v", err)
	}
	got, err := s.JobByID(nil, job.Namespace, job.ID)
	if err != nil || got == nil {
		t.Fatalf("JobByID after upsert: %v, %v", got, err)
	}
	return got
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
}

func ids[T any](xs []T, id func(T) string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		out = append(out, id(x))
	}
	return out
}

func allocIDs(as []*structs.Allocation) []string {
	return ids(as, func(a *structs.Allocation) string { return a.ID })
}

func fmtSet(xs []string) string {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return fmt.Sprint(sortedKeys(m))
}

// writeResult is Write for a change that also answers something (how many
// registrations it wrote, whether a CAS applied, ...): fn runs in one
// transaction at index, and its answer counts only if that commits.
func writeResult[T any](s *StateStore, index uint64, fn func(*Txn) (T, error)) (T, error) {
	var out T
	err := s.Write(index, func(tx *Txn) (err error) {
		out, err = fn(tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}
