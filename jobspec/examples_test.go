package jobspec

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

func TestExampleWebJobParses(t *testing.T) {
	got := mustParseFile(t, "../examples/web.hcl")
	want := &api.Job{
		ID:   new("web"),
		Name: new("web"),
		Type: new("service"),
		TaskGroups: []*api.TaskGroup{{
			Name:     new("web"),
			Count:    new(1),
			Networks: []*api.NetworkResource{{DynamicPorts: []api.Port{{Label: "http"}}}},
			Tasks: []*api.Task{{
				Name:   "server",
				Driver: "raw_exec",
				Config: map[string]interface{}{
					"command": "/usr/bin/python3",
					"args":    []interface{}{"-m", "http.server", "${NOMAD_PORT_http}"},
				},
				Resources: &api.Resources{CPU: new(100), MemoryMB: new(64)},
			}},
		}},
	}
	assertEqual(t, want, got)
}

// TestRealWorldJobShapesParseAndCanonicalize parses job files shaped like
// the ones people write for Nomad and checks the parts that make each shape
// what it is.
func TestRealWorldJobShapesParseAndCanonicalize(t *testing.T) {
	cases := []struct {
		file  string
		check func(t *testing.T, job *api.Job)
	}{
		{"redis.hcl", func(t *testing.T, job *api.Job) {
			g := job.TaskGroups[0]
			assertEqual(t, []api.Port{{Label: "db", To: 6379}}, g.Networks[0].DynamicPorts)
			s := g.Services[0]
			if s.Name != "redis-cache" || s.PortLabel != "db" || len(s.Checks) != 1 || s.Checks[0].Interval != 10*time.Second {
				t.Errorf("service = %+v", s)
			}
			assertEqual(t, map[string]interface{}{
				"image": "redis:7", "ports": []interface{}{"db"}, "auth_soft_fail": true,
			}, g.Tasks[0].Config)
		}},
		{"batch.hcl", func(t *testing.T, job *api.Job) {
			g := job.TaskGroups[0]
			if g.Tasks[0].Lifecycle.Hook != "prestart" {
				t.Errorf("fetch lifecycle = %+v", g.Tasks[0].Lifecycle)
			}
			run := g.Tasks[1]
			assertEqual(t, []interface{}{"${NOMAD_TASK_DIR}/run.sh", "${NOMAD_ALLOC_INDEX}"}, run.Config["args"])
			wantData := "#!/bin/sh\necho \"shard $1 of {{ env \"NOMAD_GROUP_NAME\" }} on ${attr.unique.hostname}\"\n"
			if got := *run.Templates[0].EmbeddedTmpl; got != wantData {
				t.Errorf("template data = %q, want %q", got, wantData)
			}
			if *g.ReschedulePolicy.Attempts != 0 {
				t.Errorf("reschedule attempts = %d", *g.ReschedulePolicy.Attempts)
			}
		}},
		{"periodic.hcl", func(t *testing.T, job *api.Job) {
			if !job.IsPeriodic() || job.Periodic.Specs[0] != "0 3 * * *" || !*job.Periodic.ProhibitOverlap {
				t.Errorf("periodic = %+v", job.Periodic)
			}
		}},
		{"sysbatch.hcl", func(t *testing.T, job *api.Job) {
			if *job.Type != api.JobTypeSysbatch || *job.NodePool != "all" {
				t.Errorf("type, pool = %s, %s", *job.Type, *job.NodePool)
			}
			assertEqual(t, map[string]string{"NODE": "${node.unique.name}"}, job.TaskGroups[0].Tasks[0].Env)
		}},
		{"parameterized.hcl", func(t *testing.T, job *api.Job) {
			if !job.IsParameterized() || job.ParameterizedJob.MetaRequired[0] != "input" {
				t.Errorf("parameterized = %+v", job.ParameterizedJob)
			}
			task := job.TaskGroups[0].Tasks[0]
			if task.DispatchPayload.File != "input.json" {
				t.Errorf("dispatch payload = %+v", task.DispatchPayload)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			job := mustParseFile(t, tc.file)
			tc.check(t, job)
			// A parsed job must take defaults without surprises.
			job.Canonicalize()
			if job.TaskGroups[0].Tasks[0].Resources.CPU == nil {
				t.Error("canonicalized task has no CPU")
			}
		})
	}
}
