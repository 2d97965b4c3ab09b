package taskrunner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers/docker"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
	"github.com/drover-sched/drover/structs"
)

// TestDockerTaskGetsTheIsolatedEnv: a docker task's environment, read
// inside a real container, holds its directories as the container sees
// them (/alloc, /local, /secrets) and the job's env block, and nothing of
// the agent's: no secret of the agent's, and not the agent's PATH, which
// names the host's directories and would hide the image's own PATH (the
// image's ENV is the container's base, as in Nomad).
func TestDockerTaskGetsTheIsolatedEnv(t *testing.T) {
	image := dockerimage.Ensure(t)
	clk := clock.NewFake(time.Time{})
	cfg := docker.DefaultPluginConfig()
	cfg.GC.Image, cfg.GC.Dangling.Enabled = false, false
	drv := docker.New(docker.Options{Clock: clk, Config: cfg})
	t.Cleanup(drv.Shutdown)
	task := &structs.Task{Name: "web", Driver: "docker", KillTimeout: 3 * time.Second,
		Env:    map[string]string{"GREETING": "hello"},
		Config: map[string]any{"image": image, "command": "/bin/env"},
	}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.cfg.HostEnv = map[string]string{"PATH": "/agent/only/bin", "AGENT_SECRET": "s3cret", "HOME": "/root"}
	h.tr = New(h.cfg)
	h.run(t)
	testutil.WaitFor(t, "the docker task to finish", h.dead)
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	out, _ := os.ReadFile(filepath.Join(h.dir.LogDir, "web.stdout.0"))
	env := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	for k, want := range map[string]string{"NOMAD_TASK_DIR": "/local", "NOMAD_ALLOC_DIR": "/alloc", "NOMAD_SECRETS_DIR": "/secrets", "GREETING": "hello", "NOMAD_TASK_NAME": "web"} {
		if env[k] != want {
			t.Errorf("%s = %q in the container, want %q (env %q)", k, env[k], want, out)
		}
	}
	if v, ok := env["AGENT_SECRET"]; ok {
		t.Errorf("the container has the agent's AGENT_SECRET = %q", v)
	}
	if env["PATH"] == "/agent/only/bin" || env["PATH"] == "" {
		t.Errorf("PATH = %q in the container, want the image's (or the daemon's default), not the agent's", env["PATH"])
	}
}
