package structs

import (
	"strings"
	"testing"
	"time"
)

func testJob() *Job {
	return &Job{
		ID: "web", Type: JobTypeService,
		TaskGroups: []*TaskGroup{{
			Name: "web", Count: 2,
			Networks: Networks{{DynamicPorts: []Port{{Label: "http"}}}},
			Tasks: []*Task{{Name: "server", Driver: "raw_exec", Config: map[string]any{"command": "/bin/true", "args": []any{"a"}},
				Resources: &Resources{CPU: 100, MemoryMB: 64}}},
		}},
	}
}

func TestCanonicalizeFillsNomadDefaultsPerType(t *testing.T) {
	svc := testJob()
	svc.Canonicalize()
	if err := svc.Validate(); err != nil {
		t.Fatalf("a canonical minimal job must validate: %v", err)
	}
	tg := svc.TaskGroups[0]
	if svc.Namespace != "default" || svc.Region != "global" || svc.Priority != 50 || svc.Name != "web" || svc.NodePool != "default" {
		t.Fatalf("job defaults wrong: %+v", svc)
	}
	if tg.RestartPolicy.Attempts != 2 || tg.RestartPolicy.Interval != 30*time.Minute || tg.RestartPolicy.Mode != "fail" {
		t.Fatalf("service restart default wrong: %+v", tg.RestartPolicy)
	}
	if !tg.ReschedulePolicy.Unlimited || tg.ReschedulePolicy.DelayFunction != "exponential" || tg.ReschedulePolicy.MaxDelay != time.Hour {
		t.Fatalf("service reschedule default wrong: %+v", tg.ReschedulePolicy)
	}
	if tg.Tasks[0].KillTimeout != 5*time.Second || tg.EphemeralDisk.SizeMB != 300 || tg.Migrate == nil {
		t.Fatal("task and group defaults missing")
	}

	batch := testJob()
	batch.Type = JobTypeBatch
	batch.Canonicalize()
	rp := batch.TaskGroups[0].ReschedulePolicy
	if rp.Attempts != 1 || rp.Interval != 24*time.Hour || rp.Unlimited || rp.DelayFunction != "constant" {
		t.Fatalf("batch reschedule default wrong: %+v", rp)
	}
	if batch.TaskGroups[0].RestartPolicy.Attempts != 3 {
		t.Fatal("batch restart default wrong")
	}

	sys := testJob()
	sys.Type = JobTypeSystem
	sys.TaskGroups[0].Count = 1
	sys.Canonicalize()
	if sys.TaskGroups[0].ReschedulePolicy != nil {
		t.Fatal("system jobs are never rescheduled")
	}
}

func TestCanonicalizeFoldsLegacyDisconnectFields(t *testing.T) {
	j := testJob()
	lost, stop := 5*time.Minute, 30*time.Second
	j.TaskGroups[0].MaxClientDisconnect = &lost
	j.Canonicalize()
	d := j.TaskGroups[0].Disconnect
	if d == nil || d.LostAfter != lost || !d.ShouldReplace() || d.ReconcileStrategy() != ReconcileBestScore {
		t.Fatalf("max_client_disconnect not folded into disconnect: %+v", d)
	}
	j2 := testJob()
	j2.TaskGroups[0].StopAfterClientDisconnect = &stop
	j2.Canonicalize()
	if d := j2.TaskGroups[0].Disconnect; d == nil || d.StopOnClientAfter == nil || *d.StopOnClientAfter != stop {
		t.Fatalf("stop_after_client_disconnect not folded: %+v", d)
	}
}

func TestValidateReportsEveryProblemWithItsPath(t *testing.T) {
	j := testJob()
	j.Canonicalize()
	j.Priority = 500
	j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 0
	j.TaskGroups[0].Tasks[0].Driver = ""
	j.TaskGroups[0].Constraints = []*Constraint{{LTarget: "${attr.x}", RTarget: "(", Operand: "regexp"}}
	j.TaskGroups[0].Disconnect = &DisconnectStrategy{Reconcile: "coin_flip"}
	err := j.Validate()
	if err == nil {
		t.Fatal("an invalid job must not validate")
	}
	msg := err.Error()
	for _, want := range []string{
		"job priority 500 must be between 1 and 100",
		`group "web" task "server": resources.memory must be > 0`,
		`group "web" task "server": driver is missing`,
		`group "web" constraint[0]: regexp "(" does not compile`,
		`group "web": disconnect.reconcile "coin_flip"`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
}

func TestValidateRejectsBadPorts(t *testing.T) {
	j := testJob()
	j.TaskGroups[0].Networks = Networks{{ReservedPorts: []Port{{Label: "a", Value: 80}, {Label: "b", Value: 80}}, DynamicPorts: []Port{{Label: "a"}}}}
	j.Canonicalize()
	msg := j.Validate().Error()
	for _, want := range []string{`static port 80 is also used by port "a"`, `port label "a" is used twice`} {
		if !strings.Contains(msg, want) {
			t.Errorf("missing %q in %s", want, msg)
		}
	}
}

func TestCopyIsDeep(t *testing.T) {
	j := testJob()
	j.Canonicalize()
	c := j.Copy()
	c.TaskGroups[0].Tasks[0].Config["args"].([]any)[0] = "changed"
	c.TaskGroups[0].Networks[0].DynamicPorts[0].Label = "changed"
	c.TaskGroups[0].RestartPolicy.Attempts = 99
	if j.TaskGroups[0].Tasks[0].Config["args"].([]any)[0] != "a" || j.TaskGroups[0].Networks[0].DynamicPorts[0].Label != "http" || j.TaskGroups[0].RestartPolicy.Attempts == 99 {
		t.Fatal("Copy shares memory with the original")
	}
}

func TestSpecChangedIgnoresServerFields(t *testing.T) {
	a := testJob()
	a.Canonicalize()
	b := a.Copy()
	b.Version, b.JobModifyIndex, b.Status, b.SubmitTime = 3, 99, JobStatusRunning, 12345
	if a.SpecChanged(b) {
		t.Fatal("server-maintained fields must not count as a spec change")
	}
	b.TaskGroups[0].Count = 5
	if !a.SpecChanged(b) {
		t.Fatal("a count change is a spec change")
	}
	c := a.Copy()
	c.Meta = map[string]string{}
	if a.SpecChanged(c) {
		t.Fatal("nil and empty meta must compare equal")
	}
}

func TestVersionConstraints(t *testing.T) {
	cases := []struct {
		version, constraint string
		want                bool
	}{
		{"1.2.3", ">= 1.2, < 2.0", true},
		{"2.0.0", ">= 1.2, < 2.0", false},
		{"1.4.9", "~> 1.4", true},
		{"2.0", "~> 1.4", false},
		{"1.4.2", "~> 1.4.1", true},
		{"1.5.0", "~> 1.4.1", false},
		{"1.2.3-beta", "< 1.2.3", true},
		{"v5.10.0", "> 5.4", true},
		{"3.1", "!= 3.1", false},
	}
	for _, tc := range cases {
		c, err := ParseVersionConstraint(tc.constraint, false)
		if err != nil {
			t.Fatalf("%q: %v", tc.constraint, err)
		}
		v, err := ParseVersion(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Check(v); got != tc.want {
			t.Errorf("%s %s = %v, want %v", tc.version, tc.constraint, got, tc.want)
		}
	}
}

func TestAllocIndexFromName(t *testing.T) {
	if AllocIndexFromName(AllocName("web", "api", 12)) != 12 {
		t.Fatal("round trip of alloc name index failed")
	}
	if AllocIndexFromName("nonsense") != -1 || AllocIndexFromName("x[]") != -1 {
		t.Fatal("names without an index must give -1")
	}
}

func TestValidateRefusesNamesThatCannotBeAddressed(t *testing.T) {
	cases := []struct {
		name string
		mut  func(j *Job)
		want string // "" means valid
	}{
		{"a dotted job ID is fine", func(j *Job) { j.ID = "web.v2..old" }, ""},
		{"job ID .", func(j *Job) { j.ID = "." }, `job ID "." cannot be used: "." and ".." are path segments`},
		{"job ID ..", func(j *Job) { j.ID = ".." }, `job ID ".." cannot be used: "." and ".." are path segments`},
		{"job ID with a control character", func(j *Job) { j.ID = "web\x7f" }, `job ID "web\x7f" must not contain`},
		{"group ..", func(j *Job) { j.TaskGroups[0].Name = ".." }, `group name ".." cannot be used: "." and ".." are path segments`},
		{"group with a NUL", func(j *Job) { j.TaskGroups[0].Name = "a\x00b" }, `group name "a\x00b" must not contain control characters`},
		{"task ..", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = ".." }, `task name ".." cannot be used: "." and ".." are path segments`},
		{"task with a slash would escape the alloc dir", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "../../etc" }, `task name "../../etc" must not contain '/'`},
		{"task with a NUL", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "a\x00" }, `task name "a\x00" must not contain`},
		{"task alloc would be given the shared alloc dir", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "alloc" }, `group "web" task "alloc": task name "alloc" is reserved: the allocation directory keeps the directory shared by all its tasks under "alloc"`},
		{"task ALLOC is the same directory on a case-insensitive disk", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "ALLOC" }, `task name "ALLOC" is reserved`},
		{"names of directories inside alloc/ do not collide", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "logs" }, ""},
		{"a task named like an alloc subdirectory", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = "alloc.d" }, ""},
		{"a task name at the length bound", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = strings.Repeat("t", MaxTaskNameLen) }, ""},
		{"a task name whose log files could not exist", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = strings.Repeat("t", MaxTaskNameLen+1) }, `task name is 201 bytes, longer than the 200 allowed`},
		{"task with a backslash", func(j *Job) { j.TaskGroups[0].Tasks[0].Name = `a\b` }, `must not contain '/', '\'`},
		{"namespace with letters, digits and dashes", func(j *Job) { j.Namespace = "team-A1" }, ""},
		{"namespace *, which every ACL check reads as any namespace", func(j *Job) { j.Namespace = "*" }, `namespace "*" must be`},
		{"namespace with a glob", func(j *Job) { j.Namespace = "team-*" }, `namespace "team-*" must be`},
		{"namespace with a slash", func(j *Job) { j.Namespace = "a/b" }, `namespace "a/b" must be`},
		{"namespace too long", func(j *Job) { j.Namespace = strings.Repeat("n", 129) }, `must be 1 to 128 letters, digits or '-'`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := testJob()
			c.mut(j)
			j.Canonicalize()
			err := j.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
		})
	}
}
