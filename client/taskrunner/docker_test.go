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

// A docker task through the task runner: it runs in its image, sees its
// directories at /alloc and /local, and its output lands in the rotated
// log files as any task's does.
func TestDockerTaskRunsAndItsLogsAppear(t *testing.T) {
	image := dockerimage.Ensure(t)
	clk := clock.NewFake(time.Time{})
	cfg := docker.DefaultPluginConfig()
	cfg.GC.Image, cfg.GC.Dangling.Enabled = false, false
	drv := docker.New(docker.Options{Clock: clk, Config: cfg})
	t.Cleanup(drv.Shutdown)
	task := &structs.Task{Name: "web", Driver: "docker", KillTimeout: 3 * time.Second,
		Config: map[string]any{"image": image, "command": "/bin/sh", "args": []any{"-c",
			`echo "alloc=$NOMAD_ALLOC_ID"; ls -d /alloc/logs /local; echo to-stderr >&2`}},
		LogConfig: &structs.LogConfig{MaxFiles: 2, MaxFileSizeMB: 1}}
	h := newHarness(t, task, structs.JobTypeBatch, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "the docker task to finish", h.dead)
	if s := h.tr.TaskState(); s.Failed {
		t.Fatalf("task failed: %+v", s.Events)
	}
	stdout, _ := os.ReadFile(filepath.Join(h.dir.LogDir, "web.stdout.0"))
	for _, want := range []string{"alloc=" + h.cfg.Alloc.ID + "\n", "/alloc/logs\n", "/local\n"} {
		if !strings.Contains(string(stdout), want) {
			t.Errorf("stdout %q lacks %q", stdout, want)
		}
	}
	if stderr, _ := os.ReadFile(filepath.Join(h.dir.LogDir, "web.stderr.0")); string(stderr) != "to-stderr\n" {
		t.Errorf("stderr = %q", stderr)
	}
}

// The alloc's shared ports list the group network's ports again; a driver
// sees each label once, with its host IP.
func TestTaskResourcesCarryEachPortLabelOnce(t *testing.T) {
	task := &structs.Task{Name: "web"}
	alloc := &structs.Allocation{AllocatedResources: &structs.AllocatedResources{
		Tasks: map[string]*structs.AllocatedTaskResources{"web": {
			Networks: structs.Networks{{IP: "10.0.0.9", DynamicPorts: []structs.Port{{Label: "admin", Value: 9000}}}},
		}},
		Shared: structs.AllocatedSharedResources{
			Ports:    structs.AllocatedPorts{{Label: "http", Value: 23456, To: 8080, HostIP: "127.0.0.1"}},
			Networks: structs.Networks{{IP: "127.0.0.1", DynamicPorts: []structs.Port{{Label: "http", Value: 23456, To: 8080}}}},
		},
	}}
	got := taskResources(alloc, task).Ports
	want := []structs.AllocatedPortMapping{
		{Label: "http", Value: 23456, To: 8080, HostIP: "127.0.0.1"},
		{Label: "admin", Value: 9000, HostIP: "10.0.0.9"},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("ports = %+v, want %+v", got, want)
	}
}
