package jobspec

import (
	"testing"

	"github.com/drover-sched/drover/api"
)

// The example parameterized job: its parameterized block, the job meta a
// dispatch may override and the task's dispatch_payload block.
func TestExampleDispatchJobParses(t *testing.T) {
	got := mustParseFile(t, "../examples/dispatch.hcl")
	want := &api.Job{
		ID:   new("process"),
		Name: new("process"),
		Type: new("batch"),
		ParameterizedJob: &api.ParameterizedJobConfig{
			Payload: "required", MetaRequired: []string{"input"}, MetaOptional: []string{"profile"},
		},
		Meta: map[string]string{"profile": "standard"},
		TaskGroups: []*api.TaskGroup{{
			Name: new("process"),
			Tasks: []*api.Task{{
				Name:            "process",
				Driver:          "raw_exec",
				DispatchPayload: &api.DispatchPayloadConfig{File: "input.json"},
				Config: map[string]interface{}{
					"command": "/bin/sh",
					"args": []interface{}{"-c",
						`echo "processing ${NOMAD_META_input} (profile ${NOMAD_META_profile})"; cat "${NOMAD_TASK_DIR}/input.json"`},
				},
				Resources: &api.Resources{CPU: new(100), MemoryMB: new(64)},
			}},
		}},
	}
	assertEqual(t, want, got)
	if !got.IsParameterized() {
		t.Fatal("the example must be a parameterized job")
	}
}
