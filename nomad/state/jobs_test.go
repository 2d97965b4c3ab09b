package state

import (
	"errors"
	"fmt"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestJobVersioning(t *testing.T) {
	cases := []struct {
		name            string
		change          func(j *structs.Job)
		wantVersion     uint64
		wantJobModify   uint64
		wantVersionRows int
	}{
		{"an identical re-register keeps the version and JobModifyIndex", func(j *structs.Job) {}, 0, 10, 1},
		{"a re-register differing only in server fields keeps the version", func(j *structs.Job) {
			j.Status, j.Version, j.SubmitTime, j.ModifyIndex = "running", 7, 999, 3
		}, 0, 10, 1},
		{"a changed spec bumps the version and JobModifyIndex", func(j *structs.Job) { j.Priority = 70 }, 1, 11, 2},
		{"stopping the job is a new version", func(j *structs.Job) { j.Stop = true }, 1, 11, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			mustJob(t, s, 10, testJob("web"))
			j := testJob("web")
			tc.change(j)
			got := mustJob(t, s, 11, j)
			if got.Version != tc.wantVersion || got.JobModifyIndex != tc.wantJobModify {
				t.Fatalf("version/JobModifyIndex = %d/%d, want %d/%d", got.Version, got.JobModifyIndex, tc.wantVersion, tc.wantJobModify)
			}
			if got.CreateIndex != 10 || got.ModifyIndex != 11 {
				t.Fatalf("create/modify = %d/%d, want 10/11", got.CreateIndex, got.ModifyIndex)
			}
			versions, err := s.JobVersionsByID(nil, "default", "web")
			mustNoErr(t, err)
			if len(versions) != tc.wantVersionRows {
				t.Fatalf("%d versions, want %d", len(versions), tc.wantVersionRows)
			}
		})
	}
}

func TestOnlyTheNewestVersionsAreKeptPlusTheNewestStable(t *testing.T) {
	s := testStateStore(t)
	total := structs.JobTrackedVersions + 3
	for i := 0; i < total; i++ {
		j := testJob("web")
		j.Priority = 10 + i
		mustJob(t, s, uint64(100+i), j)
		if i == 1 {
			mustNoErr(t, s.Write(uint64(100+i), func(tx *Txn) error { return tx.UpdateJobStability("default", "web", 1, true) }))
		}
	}
	versions, err := s.JobVersionsByID(nil, "default", "web")
	mustNoErr(t, err)
	var got []uint64
	for _, v := range versions {
		got = append(got, v.Version)
	}
	want := []uint64{}
	for v := uint64(total - 1); len(want) < structs.JobTrackedVersions; v-- {
		want = append(want, v)
	}
	want = append(want, 1) // the stable one, beyond the window
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("versions newest first = %v, want %v", got, want)
	}
	if v, _ := s.JobByIDAndVersion(nil, "default", "web", 0); v != nil {
		t.Fatal("version 0 should have been trimmed")
	}
	if v, _ := s.JobByIDAndVersion(nil, "default", "web", 1); v == nil || !v.Stable {
		t.Fatalf("stable version 1 = %+v", v)
	}
}

func TestJobVersionsDoNotMixJobsSharingAPrefix(t *testing.T) {
	s := testStateStore(t)
	mustJob(t, s, 1, testJob("web"))
	mustJob(t, s, 2, testJob("web-2"))
	changed := testJob("web-2")
	changed.Priority = 99
	mustJob(t, s, 3, changed)
	versions, _ := s.JobVersionsByID(nil, "default", "web")
	if len(versions) != 1 || versions[0].ID != "web" {
		t.Fatalf("versions of web = %+v", versions)
	}
	versions, _ = s.JobVersionsByID(nil, "default", "web-2")
	if len(versions) != 2 || versions[0].Version != 1 {
		t.Fatalf("versions of web-2 = %+v", versions)
	}
}

func TestJobLookupsByEachIndex(t *testing.T) {
	s := testStateStore(t)
	mustJob(t, s, 1, testJob("api"))
	mustJob(t, s, 2, testJob("api-worker"))
	other := testJob("api")
	other.Namespace = "prod"
	mustJob(t, s, 3, other)
	batch := testBatchJob("report")
	mustJob(t, s, 4, batch)
	periodic := testBatchJob("cron")
	periodic.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "* * * * *"}
	mustJob(t, s, 5, periodic)

	list := func(it interface{ Next() interface{} }, err error) string {
		mustNoErr(t, err)
		var out []string
		for raw := it.Next(); raw != nil; raw = it.Next() {
			j := raw.(*structs.Job)
			out = append(out, j.Namespace+"/"+j.ID)
		}
		return fmtSet(out)
	}
	cases := []struct{ name, got, want string }{
		{"prefix within a namespace", list(s.JobsByIDPrefix(nil, "default", "api")), "[default/api default/api-worker]"},
		{"namespace lists only its jobs", list(s.JobsByNamespace(nil, "prod")), "[prod/api]"},
		{"all jobs", list(s.Jobs(nil)), "[default/api default/api-worker default/cron default/report prod/api]"},
		{"by scheduler type", list(s.JobsBySchedulerType(nil, structs.JobTypeBatch)), "[default/cron default/report]"},
		{"periodic", list(s.JobsByPeriodic(nil, true)), "[default/cron]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got %s, want %s", tc.got, tc.want)
			}
		})
	}
	if j, _ := s.JobByID(nil, "prod", "api"); j == nil || j.CreateIndex != 3 {
		t.Fatalf("JobByID(prod/api) = %+v", j)
	}
}

func TestJobSummaryFollowsTheJobsGroups(t *testing.T) {
	s := testStateStore(t)
	mustJob(t, s, 1, testJob("web", "a", "b"))
	sum, _ := s.JobSummaryByID(nil, "default", "web")
	if sum == nil || len(sum.Summary) != 2 || sum.CreateIndex != 1 || sum.Children == nil {
		t.Fatalf("summary = %+v", sum)
	}
	mustJob(t, s, 2, testJob("web", "b", "c"))
	sum, _ = s.JobSummaryByID(nil, "default", "web")
	if _, ok := sum.Summary["a"]; ok || len(sum.Summary) != 2 || sum.ModifyIndex != 2 {
		t.Fatalf("summary after regrouping = %+v", sum)
	}
	if _, ok := sum.Summary["c"]; !ok {
		t.Fatalf("group c missing: %+v", sum)
	}
}

func TestDeleteJobRemovesVersionsAndSummary(t *testing.T) {
	s := testStateStore(t)
	mustJob(t, s, 1, testJob("web"))
	changed := testJob("web")
	changed.Priority = 60
	mustJob(t, s, 2, changed)
	mustJob(t, s, 3, testJob("web-2"))
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.DeleteJob("default", "web") }))
	if j, _ := s.JobByID(nil, "default", "web"); j != nil {
		t.Fatal("job still there")
	}
	if v, _ := s.JobVersionsByID(nil, "default", "web"); len(v) != 0 {
		t.Fatalf("versions left: %d", len(v))
	}
	if sum, _ := s.JobSummaryByID(nil, "default", "web"); sum != nil {
		t.Fatal("summary left")
	}
	if v, _ := s.JobVersionsByID(nil, "default", "web-2"); len(v) != 1 {
		t.Fatal("deleting web removed web-2's versions")
	}
	for _, table := range []string{TableJobs, TableJobVersion, TableJobSummary} {
		if idx, _ := s.Index(table); idx != 4 {
			t.Fatalf("%s index = %d, want 4", table, idx)
		}
	}
	if err := s.Write(5, func(tx *Txn) error { return tx.DeleteJob("default", "web") }); !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("deleting a missing job: %v", err)
	}
}

func TestUpdateJobStabilityMarksTheVersionAndTheCurrentJob(t *testing.T) {
	s := testStateStore(t)
	mustJob(t, s, 1, testJob("web"))
	changed := testJob("web")
	changed.Priority = 60
	mustJob(t, s, 2, changed)

	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpdateJobStability("default", "web", 0, true) }))
	if cur, _ := s.JobByID(nil, "default", "web"); cur.Stable {
		t.Fatal("marking version 0 stable changed the current (version 1) job")
	}
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpdateJobStability("default", "web", 1, true) }))
	if cur, _ := s.JobByID(nil, "default", "web"); !cur.Stable || cur.ModifyIndex != 4 {
		t.Fatalf("current job = stable %v modify %d", cur.Stable, cur.ModifyIndex)
	}
	if v, _ := s.JobByIDAndVersion(nil, "default", "web", 0); !v.Stable {
		t.Fatal("version 0 not stable")
	}
	if err := s.Write(5, func(tx *Txn) error { return tx.UpdateJobStability("default", "web", 9, true) }); !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("unknown version: %v", err)
	}
	// A new spec starts unstable; an unchanged re-register keeps stability.
	mustJob(t, s, 6, changed)
	if cur, _ := s.JobByID(nil, "default", "web"); !cur.Stable {
		t.Fatal("an identical re-register dropped stability")
	}
	changed.Priority = 61
	if cur := mustJob(t, s, 7, changed); cur.Stable || cur.Version != 2 {
		t.Fatalf("new version: stable %v version %d", cur.Stable, cur.Version)
	}
}

func TestStoredJobIsACopy(t *testing.T) {
	s := testStateStore(t)
	j := testJob("web")
	mustJob(t, s, 1, j)
	j.TaskGroups[0].Count = 42
	got, _ := s.JobByID(nil, "default", "web")
	if got.TaskGroups[0].Count != 1 {
		t.Fatal("the store shares the caller's job")
	}
	if j.CreateIndex != 0 {
		t.Fatal("UpsertJob wrote into the caller's job")
	}
}

func TestUpsertJobWithEvalIsOneWrite(t *testing.T) {
	s := testStateStore(t)
	job := testJob("web")
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpsertJobWithEval(job, testEval("e1", job)) }))
	e, _ := s.EvalByID(nil, "e1")
	if e == nil || e.JobModifyIndex != 5 || e.CreateIndex != 5 {
		t.Fatalf("eval = %+v", e)
	}
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusPending {
		t.Fatalf("status = %q", j.Status)
	}
	// An unchanged re-register keeps JobModifyIndex, and so does its eval.
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpsertJobWithEval(job, testEval("e2", job)) }))
	if e, _ := s.EvalByID(nil, "e2"); e.JobModifyIndex != 5 {
		t.Fatalf("eval of unchanged re-register has JobModifyIndex %d, want 5", e.JobModifyIndex)
	}
	bad := testEval("", job)
	changed := testJob("web")
	changed.Priority = 99
	if err := s.Write(7, func(tx *Txn) error { return tx.UpsertJobWithEval(changed, bad) }); err == nil {
		t.Fatal("an eval without ID was accepted")
	}
	if j, _ := s.JobByID(nil, "default", "web"); j.Version != 0 {
		t.Fatal("the job of a refused write was applied")
	}
}
