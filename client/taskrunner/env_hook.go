package taskrunner

import (
	"context"

	"github.com/drover-sched/drover/client/taskenv"
	"github.com/drover-sched/drover/structs"
)

// envHook builds the task's environment for the attempt: the host's base
// environment, Nomad's NOMAD_* variables for this node, alloc and task,
// the task's env block, and the task's directories. It runs after the
// dispatch payload is written and before the artifacts, whose sources it
// interpolates; the template hook puts its variables on top. It is built
// afresh for every attempt, so a restart after UpdateAlloc sees the newer
// alloc's values.
type envHook struct {
	node    *structs.Node
	region  string
	hostEnv map[string]string
}

func (*envHook) Name() string { return "env" }

func (h *envHook) Prestart(_ context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	dirs := taskenv.Dirs{AllocDir: req.AllocDir.SharedDir, TaskDir: req.TaskDir.LocalDir, SecretsDir: req.TaskDir.SecretsDir}
	resp.Env = taskenv.Build(h.node, req.Alloc, req.Task, h.region, dirs, h.hostEnv)
	return nil
}
