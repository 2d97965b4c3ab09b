package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/structs"
)

// testConfig is the plugin config tests run with: Nomad's defaults less
// the background collectors, which tests drive themselves.
func testConfig() PluginConfig {
	c := DefaultPluginConfig()
	c.GC.Image = false
	c.GC.Dangling.Enabled = false
	return c
}

// newTestDriver returns a driver on the local daemon, shut down at the
// end of the test.
func newTestDriver(t testing.TB, mod func(*Options)) (*Driver, *client.Client) {
	t.Helper()
	cli := dockerimage.Client(t)
	dockerimage.Ensure(t)
	opts := Options{Config: testConfig()}
	if mod != nil {
		mod(&opts)
	}
	d := New(opts)
	t.Cleanup(d.Shutdown)
	return d, cli
}

// testTask is one task attempt's config with its directories and log
// FIFOs, and readers that collect what reaches the FIFOs.
type testTask struct {
	cfg            *drivers.TaskConfig
	stdout, stderr *fifoReader
}

// newTestTask lays out an alloc dir like the task runner's and removes
// every container of the alloc at the end.
func newTestTask(t testing.TB, cli *client.Client, config map[string]any) *testTask {
	t.Helper()
	root := t.TempDir()
	allocID := structs.GenerateUUID()
	taskDir := filepath.Join(root, "web")
	for _, d := range []string{filepath.Join(root, "alloc", "logs"), filepath.Join(taskDir, "local"), filepath.Join(taskDir, "secrets")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := config["image"]; !ok {
		config["image"] = dockerimage.Ref
	}
	tt := &testTask{cfg: &drivers.TaskConfig{
		ID: allocID + "/web/" + structs.GenerateUUID()[:8], AllocID: allocID, TaskName: "web", JobName: "example", GroupName: "cache",
		Config: config, Env: map[string]string{"NOMAD_TASK_NAME": "web", "NOMAD_ALLOC_DIR": "/alloc", "PATH": "/bin"},
		AllocDir: root, TaskDir: taskDir, Dir: taskDir,
		StdoutPath: filepath.Join(root, "alloc", "logs", ".web.stdout.fifo"),
		StderrPath: filepath.Join(root, "alloc", "logs", ".web.stderr.fifo"),
		Resources:  drivers.TaskResources{CPUShares: 100, MemoryMB: 64},
	}}
	tt.stdout = newFIFOReader(t, tt.cfg.StdoutPath)
	tt.stderr = newFIFOReader(t, tt.cfg.StderrPath)
	t.Cleanup(func() { removeAllocContainers(t, cli, allocID) })
	return tt
}

// removeAllocContainers removes what a test left of an alloc's containers.
func removeAllocContainers(t testing.TB, cli *client.Client, allocID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelAllocID+"="+allocID))})
	if err != nil {
		t.Logf("listing leftover containers: %v", err)
		return
	}
	for _, c := range list {
		_ = cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	}
}

// fifoReader reads a log FIFO as the task runner would.
type fifoReader struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func newFIFOReader(t testing.TB, path string) *fifoReader {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	// Read and write end both: the reader never sees EOF between writers,
	// as the task runner's reader does not.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &fifoReader{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			r.mu.Lock()
			r.buf.Write(b[:n])
			r.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		f.Close()
		<-done
	})
	return r
}

func (r *fifoReader) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.buf.String()
}

// waitOutput waits until what reached the FIFO satisfies ok: output the
// driver wrote may still sit in the FIFO when the exit is reported.
func (r *fifoReader) waitOutput(t *testing.T, what string, ok func(string) bool) {
	t.Helper()
	wait.For(t, 10*time.Second, func() (bool, string) {
		out := r.String()
		return ok(out), fmt.Sprintf("output %q: %s", out, what)
	}, wait.Every(10*time.Millisecond))
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, deadline time.Duration, cond func() bool) {
	t.Helper()
	wait.For(t, deadline, func() (bool, string) { return cond(), "waiting for " + what }, wait.Every(20*time.Millisecond))
}

// start starts the task and destroys it at the end of the test.
func start(t *testing.T, d *Driver, tt *testTask) *drivers.TaskHandle {
	t.Helper()
	h, err := d.StartTask(tt.cfg)
	if err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	t.Cleanup(func() {
		if err := d.DestroyTask(tt.cfg.ID, true); err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
			t.Errorf("DestroyTask: %v", err)
		}
	})
	return h
}

// waitExit waits for the task's exit result.
func waitExit(t *testing.T, d *Driver, id string, deadline time.Duration) *drivers.ExitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	ch, err := d.WaitTask(ctx, id)
	if err != nil {
		t.Fatalf("WaitTask: %v", err)
	}
	res, ok := <-ch
	if !ok {
		t.Fatalf("task %s did not exit within %v", id, deadline)
	}
	return res
}

// inspect returns the task's container as the daemon sees it.
func inspect(t *testing.T, cli *client.Client, h *drivers.TaskHandle) container.InspectResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := cli.ContainerInspect(ctx, containerIDOf(t, h))
	if err != nil {
		t.Fatalf("ContainerInspect: %v", err)
	}
	return info
}

func containerIDOf(t *testing.T, h *drivers.TaskHandle) string {
	t.Helper()
	s := string(h.DriverState)
	i := strings.Index(s, `"ContainerID":"`)
	if i < 0 {
		t.Fatalf("no container ID in driver state %s", s)
	}
	s = s[i+len(`"ContainerID":"`):]
	return s[:strings.IndexByte(s, '"')]
}

// shell is a config running script under sh -c.
func shell(script string) map[string]any {
	return map[string]any{"command": "/bin/sh", "args": []any{"-c", script}}
}
