package taskrunner

import (
	"context"
	"testing"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/structs"
)

func TestEnvHookBuildsTheEnvironmentOfTheAttempt(t *testing.T) {
	alloc := &structs.Allocation{ID: structs.GenerateUUID(), Name: "job.g[0]", JobID: "job", TaskGroup: "g", Namespace: "default",
		Job: &structs.Job{ID: "job", Name: "job"}}
	dir := allocdir.New(t.TempDir(), alloc.ID)
	task := &structs.Task{Name: "web", Env: map[string]string{"WHERE": "${attr.kernel.name}", "PATH": "/opt/bin"}}
	hook := &envHook{node: &structs.Node{ID: "n", Datacenter: "dc1", Attributes: structs.NewAttributes(map[string]string{"kernel.name": "linux"})},
		region: "eu", hostEnv: map[string]string{"PATH": "/usr/bin", "HOME": "/root"}}
	req := &PrestartRequest{Alloc: alloc, Task: task, AllocDir: dir, TaskDir: dir.Task("web")}
	var resp PrestartResponse
	if err := hook.Prestart(context.Background(), req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Env == nil {
		t.Fatal("the env hook handed on no environment")
	}
	got := resp.Env.Map()
	want := map[string]string{
		"NOMAD_ALLOC_ID":    alloc.ID,
		"NOMAD_TASK_NAME":   "web",
		"NOMAD_REGION":      "eu",
		"NOMAD_DC":          "dc1",
		"NOMAD_ALLOC_DIR":   dir.SharedDir,
		"NOMAD_TASK_DIR":    dir.Task("web").LocalDir,
		"NOMAD_SECRETS_DIR": dir.Task("web").SecretsDir,
		"WHERE":             "linux",    // the task's env, interpolated
		"PATH":              "/opt/bin", // the task's env over the host's
		"HOME":              "/root",    // the host's base
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
