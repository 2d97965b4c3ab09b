package nomad

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Register and plan warn that memory_max will be ignored while memory
// oversubscription is off, and stop warning once it is on.
func TestRegisterAndPlanWarnOfIgnoredMemoryMax(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	job := itJob("big", 1)
	job.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = 512
	want := `memory_max of task "` + job.TaskGroups[0].Name + "/" + job.TaskGroups[0].Tasks[0].Name + `" will be ignored`

	var plan structs.JobPlanResponse
	if err := s.RPC("Job.Plan", &structs.JobPlanRequest{Job: job}, &plan); err != nil {
		t.Fatal(err)
	}
	var reg structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reg); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]string{"plan": plan.Warnings, "register": reg.Warnings} {
		if !strings.Contains(w, want) {
			t.Errorf("%s warnings %q, want %q", name, w, want)
		}
	}
	var plain structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: itJob("small", 1)}, &plain); err != nil || plain.Warnings != "" {
		t.Fatalf("a job without memory_max: %v %q", err, plain.Warnings)
	}

	if _, err := setSchedulerConfig(s, structs.SchedulerConfiguration{MemoryOversubscriptionEnabled: true}, false); err != nil {
		t.Fatal(err)
	}
	reg = structs.JobRegisterResponse{}
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &reg); err != nil || reg.Warnings != "" {
		t.Fatalf("with oversubscription on: %v %q", err, reg.Warnings)
	}
}
