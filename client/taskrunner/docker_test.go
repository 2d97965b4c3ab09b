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

// A docker task whose registry refuses its credentials fails at once (no
// restart), with a Driver Failure event that names the image and says
// what the registry answered.
func TestDockerPullWithWrongPasswordFailsWithAnEvent(t *testing.T) {
	cli := dockerimage.Client(t)
	dockerimage.Ensure(t)
	user := &dockerimage.RegistryUser{Name: "drover", Password: "s3cret"}
	reg := dockerimage.StartRegistry(t, user)
	ref := reg + "/private/busybox:1"
	dockerimage.Push(t, cli, dockerimage.Ref, ref, dockerimage.RegistryAuth(t, reg, user))

	clk := clock.NewFake(time.Time{})
	cfg := docker.DefaultPluginConfig()
	cfg.GC.Image, cfg.GC.Dangling.Enabled = false, false
	drv := docker.New(docker.Options{Clock: clk, Config: cfg})
	t.Cleanup(drv.Shutdown)
	task := &structs.Task{Name: "web", Driver: "docker", KillTimeout: 3 * time.Second,
		Config: map[string]any{"image": ref, "command": "true",
			"auth": []map[string]any{{"username": "drover", "password": "wrong"}}},
		RestartPolicy: &structs.RestartPolicy{Attempts: 3, Interval: time.Hour, Delay: time.Second, Mode: structs.RestartPolicyModeFail},
		LogConfig:     &structs.LogConfig{MaxFiles: 2, MaxFileSizeMB: 1}}
	h := newHarness(t, task, structs.JobTypeService, drv, clk)
	h.run(t)
	testutil.WaitFor(t, "the task to fail", h.dead)
	s := h.tr.TaskState()
	if !s.Failed || s.Restarts != 0 {
		t.Fatalf("state %+v, want failed without restarts", s)
	}
	var failure *structs.TaskEvent
	for _, e := range s.Events {
		if e.Type == structs.TaskDriverFailure {
			failure = e
		}
	}
	if failure == nil {
		t.Fatalf("no %s event in %v", structs.TaskDriverFailure, eventTypes(s))
	}
	if msg := failure.DisplayMessage; !strings.Contains(msg, `"`+ref+`"`) || !strings.Contains(msg, "unauthorized: authentication required") {
		t.Fatalf("driver failure event %q, want the image and the registry's answer", msg)
	}
}
