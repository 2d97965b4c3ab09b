package reconciler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func TestCompareVersions(t *testing.T) {
	base := testJob(structs.JobTypeService, 3)
	cases := []struct {
		name   string
		change func(j *structs.Job)
		want   change
		reason string
	}{
		{"the same registration is unchanged", nil, unchanged, ""},
		{"a count change is in place", func(j *structs.Job) { j.TaskGroups[0].Count = 5 }, inPlace, ""},
		{"job meta and priority change in place", func(j *structs.Job) { j.Meta = map[string]string{"a": "b"}; j.Priority = 80 }, inPlace, ""},
		{"a reschedule policy change is in place", func(j *structs.Job) { j.TaskGroups[0].ReschedulePolicy.Delay = time.Minute }, inPlace, ""},
		{"a task kill timeout change is in place", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].KillTimeout = time.Minute }, inPlace, ""},
		{"a task env change is destructive", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Env = map[string]string{"A": "1"} }, destructive, `task "server" Env changed`},
		{"a task config change is destructive", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Config["command"] = "/bin/true" }, destructive, `task "server" Config changed`},
		{"a resources change is destructive", func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.CPU = 500 }, destructive, `task "server" Resources changed`},
		{"a group constraint change is destructive", func(j *structs.Job) {
			j.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="}}
		}, destructive, "group Constraints changed"},
		{"a datacenter change is destructive", func(j *structs.Job) { j.Datacenters = []string{"dc2"} }, destructive, "job Datacenters changed"},
		{"a new task is destructive", func(j *structs.Job) {
			j.TaskGroups[0].Tasks = append(j.TaskGroups[0].Tasks, &structs.Task{Name: "side", Driver: "raw_exec"})
		}, destructive, "tasks added or removed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			next := base
			if tc.change != nil {
				next = nextVersion(base, tc.change)
			}
			got, why := compareVersions(base, next, "web")
			if got != tc.want || why != tc.reason {
				t.Fatalf("got %d %q, want %d %q", got, why, tc.want, tc.reason)
			}
		})
	}
}
