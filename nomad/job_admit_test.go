package nomad

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A job enters the server through one admission: Register, Plan and
// Validate refuse the same job with the same words, Validate lists the
// problems without failing the call, and none of them writes.
func TestRegisterPlanAndValidateRefuseAJobAlike(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	WaitForLeader(t, 5*time.Second, s)

	badPriority := itJob("prio", 1)
	badPriority.Priority = 500
	badCron := itJob("cron", 1)
	badCron.Type = structs.JobTypeBatch
	badCron.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "not a cron line"}
	for _, tc := range []struct {
		name string
		job  *structs.Job
		want string
	}{
		{"a field out of range", badPriority, "priority"},
		{"a periodic spec that does not parse", badCron, "not a cron line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := latestIndex(t, s)
			regErr := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: tc.job}, &structs.JobRegisterResponse{})
			planErr := s.RPC("Job.Plan", &structs.JobPlanRequest{Job: tc.job}, &structs.JobPlanResponse{})
			var v structs.JobValidateResponse
			if err := s.RPC("Job.Validate", &structs.JobValidateRequest{Job: tc.job}, &v); err != nil {
				t.Fatalf("validate of an invalid job failed the call: %v", err)
			}
			if regErr == nil || !errors.Is(regErr, ErrBadRequest) || !strings.HasPrefix(regErr.Error(), "invalid job: ") ||
				!strings.Contains(regErr.Error(), tc.want) {
				t.Fatalf("register: got %v, want a bad request reading \"invalid job: ...%s...\"", regErr, tc.want)
			}
			if planErr == nil || planErr.Error() != regErr.Error() {
				t.Errorf("plan refused with %v, register with %v", planErr, regErr)
			}
			if v.Error != regErr.Error() || len(v.ValidationErrors) == 0 || !v.DriverConfigValidated {
				t.Errorf("validate answered %+v, register refused with %v", v, regErr)
			}
			for _, p := range v.ValidationErrors {
				if !strings.Contains(regErr.Error(), p) {
					t.Errorf("validate's problem %q is not in register's refusal %q", p, regErr)
				}
			}
			if after := latestIndex(t, s); after != before {
				t.Errorf("a refused job moved the state from index %d to %d", before, after)
			}
		})
	}

	var v structs.JobValidateResponse
	before := latestIndex(t, s)
	if err := s.RPC("Job.Validate", &structs.JobValidateRequest{Job: itJob("fine", 1)}, &v); err != nil {
		t.Fatal(err)
	}
	if v.Error != "" || len(v.ValidationErrors) != 0 || v.ValidationErrors == nil {
		t.Errorf("validate of a valid job: %+v, want no problems (an empty list, not null)", v)
	}
	if after := latestIndex(t, s); after != before {
		t.Errorf("validate wrote: index %d to %d", before, after)
	}
	if j, _ := s.State().JobByID(nil, structs.DefaultNamespace, "fine"); j != nil {
		t.Error("validate stored the job")
	}
}

// The job the server stores is the admitted one: a caller's job is not
// changed by the admission, and what is stored is CanonicalJob's form.
func TestRegisterStoresTheAdmittedJobAndLeavesTheCallersAlone(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	WaitForLeader(t, 5*time.Second, s)
	job := itJob("web", 2)
	sent := job.Copy()
	registerJob(t, s, job)
	if !structs.DeepEqual(job, sent) {
		t.Error("register changed the caller's job")
	}
	want, err := CanonicalJob(sent, structs.DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.State().JobByID(nil, structs.DefaultNamespace, "web")
	if err != nil || stored == nil {
		t.Fatalf("stored job: %v %v", stored, err)
	}
	// What the server adds on the way in: indexes, the submit time,
	// the status and the version.
	got := stored.Copy()
	got.CreateIndex, got.ModifyIndex, got.JobModifyIndex, got.SubmitTime = 0, 0, 0, 0
	got.Status, got.Version, got.Stable = want.Status, want.Version, want.Stable
	if !structs.DeepEqual(got, want) {
		t.Errorf("stored job differs from the admitted one:\nstored   %+v\nadmitted %+v", got, want)
	}
}
