package exec

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/exec/execinit"
	"github.com/drover-sched/drover/client/drivers/executor"
	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/taskuser"
)

// TestMain lets the test binary stand in for the drover executable: the
// driver starts os.Executable() as each task's init.
func TestMain(m *testing.M) {
	if code, ok := execinit.MaybeRun(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the exec driver needs root (namespaces, mounts, cgroups)")
	}
	for _, ns := range []string{"mnt", "pid", "ipc", "uts"} {
		if _, err := os.Stat("/proc/self/ns/" + ns); err != nil {
			t.Skipf("the kernel lacks %s namespaces", ns)
		}
	}
}

// output collects what a task writes to one log FIFO.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
	// first is closed by the first write.
	first     chan struct{}
	firstOnce sync.Once
}

func newOutput() *output { return &output{first: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.firstOnce.Do(func() { close(o.first) })
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

var taskSeq atomic.Int64

// newDriver returns an enabled exec driver, shut down with the test.
func newDriver(t testing.TB) *executor.Driver {
	t.Helper()
	d := New(Options{Enabled: true})
	t.Cleanup(d.Shutdown)
	return d
}

// rootAllowed is the user policy of a client whose operator emptied
// user.denylist: tests of what a root task holds run under it.
var rootAllowed = &taskuser.Policy{}

// newRootDriver is newDriver on a client that lets tasks run as root.
func newRootDriver(t testing.TB) *executor.Driver {
	t.Helper()
	d := New(Options{Enabled: true, Users: rootAllowed})
	t.Cleanup(d.Shutdown)
	return d
}

// testTask lays out an alloc dir the way the client does (alloc/ shared,
// <task>/local, secrets, tmp; log FIFOs) and returns a config running
// script with /bin/sh, plus its stdout and stderr.
func testTask(t testing.TB, script string) (*drivers.TaskConfig, *output, *output) {
	t.Helper()
	root, err := os.MkdirTemp("", "drover-exec-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	taskDir := filepath.Join(root, "web")
	for _, d := range []string{"alloc/logs", "alloc/data", "web/local", "web/secrets", "web/tmp"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The task runner gives the task's own directories to its user before
	// it starts the task (allocdir.TaskDir.Chown); the default user here.
	td := allocdir.TaskDir{Dir: taskDir, LocalDir: filepath.Join(taskDir, "local"), SecretsDir: filepath.Join(taskDir, "secrets"), TmpDir: filepath.Join(taskDir, "tmp")}
	if err := td.Chown(65534, 65534); err != nil {
		t.Fatal(err)
	}
	// As private as a client may make it: the driver must make it do.
	if err := os.Chmod(taskDir, 0o700); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := newOutput(), newOutput()
	paths := []string{filepath.Join(root, "alloc/logs/.web.stdout.fifo"), filepath.Join(root, "alloc/logs/.web.stderr.fifo")}
	for i, p := range paths {
		if err := unix.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		w, err := os.OpenFile(p, os.O_WRONLY, 0) // keeps the reader from seeing EOF between writers
		if err != nil {
			t.Fatal(err)
		}
		dst := []*output{stdout, stderr}[i]
		done := make(chan struct{})
		go func() { defer close(done); _, _ = io.Copy(dst, r) }()
		t.Cleanup(func() { w.Close(); r.Close(); <-done })
	}
	n := taskSeq.Add(1)
	// The short ID (the task's hostname) differs between tasks.
	allocID := fmt.Sprintf("%02x%06x-0000-0000-0000-%012d", n%256, os.Getpid()%0xffffff, n)
	cfg := &drivers.TaskConfig{
		ID: allocID + "/web/" + strconv.FormatInt(n, 10), AllocID: allocID, TaskName: "web",
		AllocDir: root, TaskDir: taskDir, Dir: taskDir,
		StdoutPath: paths[0], StderrPath: paths[1],
		Config: map[string]any{"command": "/bin/sh", "args": []any{"-c", script}},
		Env: map[string]string{
			"PATH": "/usr/bin:/bin", "NOMAD_TASK_DIR": filepath.Join(taskDir, "local"),
			"NOMAD_ALLOC_DIR": filepath.Join(root, "alloc"), "NOMAD_SECRETS_DIR": filepath.Join(taskDir, "secrets"),
		},
		Resources: drivers.TaskResources{MemoryMB: 64, CPUShares: 100},
	}
	return cfg, stdout, stderr
}

// start starts cfg and makes sure it is destroyed with the test.
func start(t testing.TB, d *executor.Driver, cfg *drivers.TaskConfig) *drivers.TaskHandle {
	t.Helper()
	h, err := d.StartTask(cfg)
	if err != nil {
		t.Fatalf("StartTask: %v", err)
	}
	t.Cleanup(func() { _ = d.DestroyTask(cfg.ID, true) })
	return h
}

// waitExit waits for the task's exit result.
func waitExit(t testing.TB, d drivers.Driver, id string) *drivers.ExitResult {
	t.Helper()
	ch, err := d.WaitTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-ch:
		if res == nil {
			t.Fatal("no exit result")
		}
		return res
	case <-time.After(testutil.DefaultWait):
		t.Fatal("the task did not exit")
	}
	return nil
}

// waitOutput waits until o holds want.
func waitOutput(t testing.TB, o *output, want string) {
	t.Helper()
	testutil.WaitFor(t, "output "+strconv.Quote(want)+", have "+strconv.Quote(o.String()), func() bool {
		return strings.Contains(o.String(), want)
	})
}
