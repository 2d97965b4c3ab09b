package taskrunner

import (
	"context"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/taskenv"
	"github.com/drover-sched/drover/structs"
)

// envHook builds the task's environment for the attempt: a base from the
// agent's environment, Nomad's NOMAD_* variables for this node, alloc
// and task, the task's env block, and the task's directories. It runs
// after the dispatch payload is written and before the artifacts, whose
// sources it interpolates; the template hook puts its variables on top.
// It is built afresh for every attempt, so a restart after UpdateAlloc
// sees the newer alloc's values.
//
// The driver's capabilities choose two things. The base: the agent's
// environment less env.denylist (hostEnv) for a driver with HostEnv, only
// PATH, locale and time zone from it (taskenv.IsolatedBase) for one
// without, and nothing of it for a task in an image (docker), whose
// image's ENV is its base. The directories: their host paths for a task that sees the
// host's file system, the paths they are mounted at (/alloc, /local,
// /secrets) for a task in a chroot or an image.
type envHook struct {
	node    *structs.Node
	region  string
	hostEnv map[string]string
	driver  drivers.Driver
}

func (*envHook) Name() string { return "env" }

func (h *envHook) Prestart(_ context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	caps := drivers.CapabilitiesOf(h.driver)
	base := h.hostEnv
	switch {
	case caps.FSIsolation == drivers.FSIsolationImage:
		// The image's ENV is the base: the agent's PATH names the
		// host's directories and would hide the image's own.
		base = nil
	case !caps.HostEnv:
		base = taskenv.IsolatedBase(h.hostEnv)
	}
	resp.Env = taskenv.Build(h.node, req.Alloc, req.Task, h.region, taskDirs(caps, req), base)
	return nil
}

// taskDirs are the task's directories as the task sees them.
func taskDirs(caps drivers.Capabilities, req *PrestartRequest) taskenv.Dirs {
	if caps.FSIsolation == drivers.FSIsolationNone {
		return hostDirs(req)
	}
	return taskenv.Dirs{AllocDir: drivers.TaskAllocDir, TaskDir: drivers.TaskLocalDir, SecretsDir: drivers.TaskSecretsDir}
}

// hostDirs are the task's directories as the client sees them, for
// interpolating the paths the client itself writes (artifact and
// template destinations).
func hostDirs(req *PrestartRequest) taskenv.Dirs {
	return taskenv.Dirs{AllocDir: req.AllocDir.SharedDir, TaskDir: req.TaskDir.LocalDir, SecretsDir: req.TaskDir.SecretsDir}
}
