package api

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

func TestJobCanonicalizeFillsTopLevelDefaults(t *testing.T) {
	job := &Job{ID: new("web")}
	job.Canonicalize()

	checks := []struct {
		field string
		got   any
		want  any
	}{
		{"Name", *job.Name, "web"},
		{"Namespace", *job.Namespace, "default"},
		{"Region", *job.Region, "global"},
		{"Type", *job.Type, "service"},
		{"Priority", *job.Priority, 50},
		{"NodePool", *job.NodePool, "default"},
		{"AllAtOnce", *job.AllAtOnce, false},
		{"Stop", *job.Stop, false},
		{"Version", *job.Version, uint64(0)},
		{"Update", job.Update, DefaultUpdateStrategy()},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
}

func TestJobCanonicalizeKeepsWhatIsSet(t *testing.T) {
	job := &Job{
		ID:        new("web"),
		Name:      new("front"),
		Namespace: new("team-a"),
		Priority:  new(0),
		NodePool:  new("gpu"),
	}
	job.Canonicalize()
	if *job.Name != "front" || *job.Namespace != "team-a" || *job.Priority != 0 || *job.NodePool != "gpu" {
		t.Errorf("set fields were overwritten: name %q namespace %q priority %d pool %q",
			*job.Name, *job.Namespace, *job.Priority, *job.NodePool)
	}
}

// groupDefaults is what canonicalizing a bare group yields per job type.
type groupDefaults struct {
	restart    *RestartPolicy
	reschedule *ReschedulePolicy
	migrate    *MigrateStrategy
	update     *UpdateStrategy
}

func TestGroupCanonicalizeDefaultsDependOnJobType(t *testing.T) {
	serviceRestart := &RestartPolicy{
		Attempts: new(2), Interval: new(30 * time.Minute), Delay: new(15 * time.Second),
		Mode: new("fail"), RenderTemplates: new(false),
	}
	batchRestart := &RestartPolicy{
		Attempts: new(3), Interval: new(24 * time.Hour), Delay: new(15 * time.Second),
		Mode: new("fail"), RenderTemplates: new(false),
	}
	serviceReschedule := &ReschedulePolicy{
		Attempts: new(0), Interval: new(time.Duration(0)), Delay: new(30 * time.Second),
		DelayFunction: new("exponential"), MaxDelay: new(time.Hour), Unlimited: new(true),
	}
	batchReschedule := &ReschedulePolicy{
		Attempts: new(1), Interval: new(24 * time.Hour), Delay: new(5 * time.Second),
		DelayFunction: new("constant"), MaxDelay: new(time.Duration(0)), Unlimited: new(false),
	}

	cases := []struct {
		name    string
		jobType string
		want    groupDefaults
	}{
		{"a service group restarts twice in 30m, reschedules forever, migrates and updates", JobTypeService, groupDefaults{
			restart: serviceRestart, reschedule: serviceReschedule,
			migrate: DefaultMigrateStrategy(), update: DefaultUpdateStrategy(),
		}},
		{"a batch group restarts three times a day, reschedules once, and neither migrates nor updates", JobTypeBatch, groupDefaults{
			restart: batchRestart, reschedule: batchReschedule,
		}},
		{"a system group restarts like a service but never reschedules", JobTypeSystem, groupDefaults{
			restart: serviceRestart, update: DefaultUpdateStrategy(),
		}},
		{"a sysbatch group restarts like a batch group and never reschedules", JobTypeSysbatch, groupDefaults{
			restart: batchRestart,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := &Job{ID: new("j"), Type: new(tc.jobType), TaskGroups: []*TaskGroup{{Name: new("g")}}}
			job.Canonicalize()
			g := job.TaskGroups[0]
			got := groupDefaults{g.RestartPolicy, g.ReschedulePolicy, g.Migrate, g.Update}
			assertJSONEqual(t, tc.want, got)
			if *g.Count != 1 {
				t.Errorf("Count = %d, want 1", *g.Count)
			}
			assertJSONEqual(t, DefaultEphemeralDisk(), g.EphemeralDisk)
		})
	}
}

func TestGroupCanonicalizeMergesJobPoliciesFieldByField(t *testing.T) {
	job := &Job{
		ID:         new("j"),
		Update:     &UpdateStrategy{MaxParallel: new(3), Canary: new(1)},
		Reschedule: &ReschedulePolicy{Attempts: new(7)},
		Migrate:    &MigrateStrategy{MaxParallel: new(2)},
		TaskGroups: []*TaskGroup{{
			Name:             new("g"),
			Update:           &UpdateStrategy{Canary: new(2)},
			ReschedulePolicy: &ReschedulePolicy{Delay: new(time.Minute)},
			Migrate:          &MigrateStrategy{HealthCheck: new("task_states")},
			RestartPolicy:    &RestartPolicy{Attempts: new(9)},
			Tasks: []*Task{
				{Name: "a", RestartPolicy: &RestartPolicy{Mode: new("delay")}},
				{Name: "b"},
			},
		}},
	}
	job.Canonicalize()
	g := job.TaskGroups[0]

	checks := []struct {
		name string
		got  any
		want any
	}{
		{"group update keeps job max_parallel", *g.Update.MaxParallel, 3},
		{"group update overrides job canary", *g.Update.Canary, 2},
		{"group update gets defaults for the rest", *g.Update.MinHealthyTime, 10 * time.Second},
		{"group reschedule keeps job attempts", *g.ReschedulePolicy.Attempts, 7},
		{"group reschedule sets its own delay", *g.ReschedulePolicy.Delay, time.Minute},
		{"group reschedule gets defaults for the rest", *g.ReschedulePolicy.DelayFunction, "exponential"},
		{"group migrate keeps job max_parallel", *g.Migrate.MaxParallel, 2},
		{"group migrate sets its own health check", *g.Migrate.HealthCheck, "task_states"},
		{"group restart overrides attempts", *g.RestartPolicy.Attempts, 9},
		{"group restart keeps default interval", *g.RestartPolicy.Interval, 30 * time.Minute},
		{"task restart overrides mode", *g.Tasks[0].RestartPolicy.Mode, "delay"},
		{"task restart inherits group attempts", *g.Tasks[0].RestartPolicy.Attempts, 9},
		{"task without restart inherits the group's", *g.Tasks[1].RestartPolicy, *g.RestartPolicy},
		{"job update itself is canonicalized", *job.Update.HealthCheck, "checks"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	if g.Tasks[1].RestartPolicy == g.RestartPolicy {
		t.Error("task shares the group's restart policy pointer; changing one would change the other")
	}
}

func TestTaskCanonicalizeFillsResourcesLogsAndKillTimeout(t *testing.T) {
	cases := []struct {
		name string
		in   *Resources
		want *Resources
	}{
		{"unset resources get 100 MHz and 300 MiB", nil,
			&Resources{CPU: new(100), Cores: new(0), MemoryMB: new(300)}},
		{"cores without cpu get no cpu shares", &Resources{Cores: new(2)},
			&Resources{CPU: new(0), Cores: new(2), MemoryMB: new(300)}},
		{"set fields are kept", &Resources{CPU: new(500), MemoryMB: new(64), MemoryMaxMB: new(128)},
			&Resources{CPU: new(500), Cores: new(0), MemoryMB: new(64), MemoryMaxMB: new(128)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			task := &Task{Name: "t", Resources: tc.in}
			job := &Job{ID: new("j"), TaskGroups: []*TaskGroup{{Name: new("g"), Tasks: []*Task{task}}}}
			job.Canonicalize()
			assertJSONEqual(t, tc.want, task.Resources)
			assertJSONEqual(t, DefaultLogConfig(), task.LogConfig)
			if *task.KillTimeout != 5*time.Second {
				t.Errorf("KillTimeout = %v, want 5s", *task.KillTimeout)
			}
		})
	}
}

func TestCanonicalizeNamesServicesAfterJobGroupAndTask(t *testing.T) {
	job := &Job{ID: new("web"), TaskGroups: []*TaskGroup{{
		Name:     new("cache"),
		Services: []*Service{{PortLabel: "db"}},
		Tasks: []*Task{{
			Name: "redis",
			Services: []*Service{{
				CheckRestart: &CheckRestart{Limit: 3},
				Checks:       []ServiceCheck{{Type: "tcp"}, {Type: "http", CheckRestart: &CheckRestart{Limit: 5}}},
			}},
		}},
	}}}
	job.Canonicalize()
	g := job.TaskGroups[0]
	if got := g.Services[0].Name; got != "web-cache" {
		t.Errorf("group service name = %q, want web-cache", got)
	}
	s := g.Tasks[0].Services[0]
	if s.Name != "web-cache-redis" {
		t.Errorf("task service name = %q, want web-cache-redis", s.Name)
	}
	if s.Checks[0].CheckRestart.Limit != 3 || s.Checks[1].CheckRestart.Limit != 5 {
		t.Errorf("check_restart limits = %d, %d; want 3 (inherited), 5 (own)",
			s.Checks[0].CheckRestart.Limit, s.Checks[1].CheckRestart.Limit)
	}
	if *s.Checks[0].CheckRestart.Grace != time.Second {
		t.Errorf("check_restart grace = %v, want 1s", *s.Checks[0].CheckRestart.Grace)
	}
}

func TestCanonicalizeIsIdempotent(t *testing.T) {
	job := fullJob()
	job.Canonicalize()
	once, _ := json.Marshal(job)
	job.Canonicalize()
	twice, _ := json.Marshal(job)
	if string(once) != string(twice) {
		t.Errorf("second Canonicalize changed the job:\n%s\n%s", once, twice)
	}
}

// assertJSONEqual compares through JSON so that failures print readably and
// pointer identity does not matter.
func assertJSONEqual(t *testing.T, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(w) != string(g) {
		t.Errorf("mismatch\n got: %s\nwant: %s", g, w)
	}
}

func TestJSONDurationsAreNanosecondsAndUnsetIsNull(t *testing.T) {
	var task Task
	if err := json.Unmarshal([]byte(`{"Name":"t","KillTimeout":30000000000,"RestartPolicy":{"Attempts":0}}`), &task); err != nil {
		t.Fatal(err)
	}
	if task.KillTimeout == nil || *task.KillTimeout != 30*time.Second {
		t.Errorf("KillTimeout = %v, want 30s", task.KillTimeout)
	}
	rp := task.RestartPolicy
	if rp.Attempts == nil || *rp.Attempts != 0 || rp.Interval != nil {
		t.Errorf("an explicit zero must stay set and a missing field unset: %+v", rp)
	}
}
