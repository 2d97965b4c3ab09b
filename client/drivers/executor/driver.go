package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// Options configure a process Driver.
type Options struct {
	Name   string
	Logger hclog.Logger
	Clock  clock.Clock
	// Enabled false makes the driver undetected and refuse to start tasks.
	Enabled bool
	// Attributes are advertised in the fingerprint.
	Attributes map[string]string
	// Health, if set, is reported when the driver is enabled but unusable.
	Unhealthy string
	// DefaultSignal is sent by StopTask when the task names none.
	DefaultSignal syscall.Signal
	// PollInterval is the fallback wait interval without pidfd support.
	PollInterval time.Duration
	Isolation    Isolation
	// Capabilities are what the driver declares to the task runner; the
	// zero value means raw_exec's (host paths, host environment).
	Capabilities *drivers.Capabilities
}

// Driver runs each task as a process group.
type Driver struct {
	opts   Options
	logger hclog.Logger
	clock  clock.Clock

	mu    sync.Mutex
	tasks map[string]*procTask
	wg    sync.WaitGroup
}

// procTask is one running (or exited, not yet destroyed) process.
type procTask struct {
	cfg        *drivers.TaskConfig
	pid        int
	startTicks uint64
	startedAt  time.Time
	waiter     *waiter
	// isoState is the Isolation's part of the handle.
	isoState json.RawMessage
	// ours is true for a task this process started (and can reap).
	ours bool

	done        chan struct{} // closed when the process exited or waiting stopped
	result      *drivers.ExitResult
	completedAt time.Time
}

// driverState is the opaque part of a TaskHandle.
type driverState struct {
	Pid        int
	StartTicks uint64
	Isolation  json.RawMessage `json:",omitempty"`
}

// New returns a process driver.
func New(opts Options) *Driver {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	if opts.DefaultSignal == 0 {
		opts.DefaultSignal = syscall.SIGINT
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = time.Second
	}
	return &Driver{opts: opts, logger: opts.Logger.Named(opts.Name), clock: clock.OrReal(opts.Clock), tasks: map[string]*procTask{}}
}

// Name returns the driver name.
func (d *Driver) Name() string { return d.opts.Name }

// Fingerprint reports the driver as detected when enabled.
func (d *Driver) Fingerprint() *structs.DriverInfo {
	info := &structs.DriverInfo{Detected: d.opts.Enabled, UpdateTime: d.clock.Now(), Attributes: map[string]string{}}
	for k, v := range d.opts.Attributes {
		info.Attributes[k] = v
	}
	switch {
	case !d.opts.Enabled:
		info.HealthDescription = "disabled by client configuration"
	case d.opts.Unhealthy != "":
		info.HealthDescription = d.opts.Unhealthy
	default:
		info.Healthy = true
		info.HealthDescription = "Healthy"
	}
	return info
}

// StartTask starts the command of cfg.Config ("command", "args").
func (d *Driver) StartTask(cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if !d.opts.Enabled {
		return nil, fmt.Errorf("%s: %w (enable it in the client config)", d.opts.Name, drivers.ErrDisabled)
	}
	command, err := drivers.ConfigString(cfg.Config, structs.DriverConfigCommand)
	if err != nil {
		return nil, err
	}
	if command == "" {
		return nil, errors.New(`config "command" is missing`)
	}
	args, err := drivers.ConfigStrings(cfg.Config, structs.DriverConfigArgs)
	if err != nil {
		return nil, err
	}
	stdout, stdoutHold, err := openLogFIFO(cfg.StdoutPath)
	if err != nil {
		return nil, &drivers.RecoverableError{Err: fmt.Errorf("open stdout: %w", err)}
	}
	defer closeAll(stdout, stdoutHold)
	stderr, stderrHold, err := openLogFIFO(cfg.StderrPath)
	if err != nil {
		return nil, &drivers.RecoverableError{Err: fmt.Errorf("open stderr: %w", err)}
	}
	defer closeAll(stderr, stderrHold)

	var holders []*os.File
	for _, f := range []*os.File{stdoutHold, stderrHold} {
		if f != nil {
			holders = append(holders, f)
		}
	}
	iso := d.opts.Isolation
	var cmd *exec.Cmd
	if iso != nil {
		if cmd, err = iso.Command(cfg, command, args, len(holders)); err != nil {
			return nil, err
		}
	} else {
		path, err := resolveCommand(command, cfg)
		if err != nil {
			return nil, err
		}
		if err := makeExecutable(path, cfg); err != nil {
			return nil, fmt.Errorf("making command %q executable: %w", command, err)
		}
		cmd = exec.Command(path, args...)
		cmd.Dir = cfg.Dir
		cmd.Env = cfg.EnvList()
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = append(cmd.ExtraFiles, holders...)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		if iso != nil {
			iso.Release(cfg, nil)
		}
		return nil, fmt.Errorf("start %s: %w", command, err)
	}
	pid := cmd.Process.Pid
	// We wait through a pidfd (see doc.go), never through cmd.Wait; the
	// process stays our child and is reaped by the waiter.
	_ = cmd.Process.Release()
	fail := func(err error) (*drivers.TaskHandle, error) {
		_ = unix.Kill(-pid, unix.SIGKILL)
		reapBlocking(pid)
		if iso != nil {
			iso.Kill(cfg, nil)
			iso.Release(cfg, nil)
		}
		return nil, err
	}
	st, err := readProcStat(pid)
	if err != nil {
		return fail(fmt.Errorf("read start time of pid %d: %w", pid, err))
	}
	var isoState json.RawMessage
	if iso != nil {
		if isoState, err = iso.Started(cfg, pid); err != nil {
			return fail(err)
		}
	}
	t := &procTask{cfg: cfg, pid: pid, startTicks: st.StartTicks, startedAt: d.clock.Now(), isoState: isoState, ours: true}
	if err := d.track(t); err != nil {
		return fail(err)
	}
	state, _ := json.Marshal(driverState{Pid: pid, StartTicks: st.StartTicks, Isolation: isoState})
	return &drivers.TaskHandle{Version: 1, Driver: d.opts.Name, TaskID: cfg.ID, Config: cfg, StartedAt: t.startedAt, DriverState: state}, nil
}

// track registers t and starts its waiter goroutine.
func (d *Driver) track(t *procTask) error {
	w, err := newWaiter(t.pid, t.startTicks, d.clock, d.opts.PollInterval)
	if err != nil {
		return err
	}
	t.waiter = w
	t.done = make(chan struct{})
	d.mu.Lock()
	d.tasks[t.cfg.ID] = t
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		res := w.Wait()
		if res != nil && t.ours && d.opts.Isolation != nil {
			res = d.opts.Isolation.Exited(t.cfg, res)
		}
		d.mu.Lock()
		t.result = res
		if res != nil {
			t.completedAt = d.clock.Now()
		}
		d.mu.Unlock()
		close(t.done)
	}()
	return nil
}

// RecoverTask re-attaches to the process named by the handle.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	if h == nil || h.Config == nil {
		return fmt.Errorf("%w: empty handle", drivers.ErrTaskNotFound)
	}
	d.mu.Lock()
	_, ok := d.tasks[h.Config.ID]
	d.mu.Unlock()
	if ok {
		return nil
	}
	var s driverState
	if err := json.Unmarshal(h.DriverState, &s); err != nil || s.Pid <= 0 {
		return fmt.Errorf("%w: unreadable handle", drivers.ErrTaskNotFound)
	}
	if !alive(s.Pid, s.StartTicks) {
		// Reap it if it happens to be our zombie; the status is lost anyway.
		reap(s.Pid)
		return fmt.Errorf("%w: pid %d is no longer the task's process", drivers.ErrTaskNotFound, s.Pid)
	}
	return d.track(&procTask{cfg: h.Config, pid: s.Pid, startTicks: s.StartTicks, startedAt: h.StartedAt, isoState: s.Isolation})
}

func (d *Driver) lookup(id string) (*procTask, error) {
	return drivers.LookupTask(&d.mu, d.tasks, id)
}

// exited reports whether the process has exited (not merely stopped
// waiting).
func (d *Driver) exited(t *procTask) bool {
	return drivers.Exited(t.done, &d.mu, &t.result)
}

// WaitTask delivers the exit result.
func (d *Driver) WaitTask(ctx context.Context, id string) (<-chan *drivers.ExitResult, error) {
	t, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	return drivers.WaitLocked(ctx, t.done, &d.mu, &t.result), nil
}

// StopTask signals the process group, then kills it after timeout.
func (d *Driver) StopTask(id string, timeout time.Duration, signal string) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	sig, err := drivers.ParseSignal(signal, d.opts.DefaultSignal)
	if err != nil {
		return err
	}
	if d.exited(t) {
		return nil
	}
	done := false
	if d.opts.Isolation != nil {
		// A kill_signal the isolation delivers itself (see Isolation).
		if done, err = d.opts.Isolation.Signal(t.cfg, t.isoState, sig); err != nil && !errors.Is(err, drivers.ErrTaskNotFound) {
			return err
		}
	}
	if !done {
		if err := unix.Kill(-t.pid, sig); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("signal %v to process group %d: %w", sig, t.pid, err)
		}
	}
	select {
	case <-t.done:
		return nil
	case <-d.clock.After(timeout):
	}
	d.killAll(t)
	return nil
}

// killAll kills the process group and, under an Isolation, everything
// the task started wherever it went.
//
// Once the process was reaped its pid is free: the kernel keeps it from
// a new process only while survivors still use it as their group's ID.
// So the group is then killed only without an Isolation (whose Kill
// reaches every survivor by cgroup anyway), and only while no process
// holds the pid: one that does is a newcomer, and the group its own.
func (d *Driver) killAll(t *procTask) {
	reaped := d.exited(t)
	if !reaped || (d.opts.Isolation == nil && !pidInUse(t.pid)) {
		if err := unix.Kill(-t.pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			d.logger.Warn("kill process group", "pgid", t.pid, "error", err)
		}
	}
	if d.opts.Isolation != nil {
		d.opts.Isolation.Kill(t.cfg, t.isoState)
	}
}

// DestroyTask kills what is left of the process group and forgets the task.
func (d *Driver) DestroyTask(id string, force bool) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	if !d.exited(t) {
		if !force {
			return drivers.ErrTaskRunning
		}
		d.killAll(t)
		<-t.done
	}
	// Children the task left behind in its group die with it.
	d.killAll(t)
	if d.opts.Isolation != nil {
		d.opts.Isolation.Release(t.cfg, t.isoState)
	}
	d.mu.Lock()
	delete(d.tasks, id)
	d.mu.Unlock()
	return nil
}

// InspectTask returns the task's status.
func (d *Driver) InspectTask(id string) (*drivers.TaskStatus, error) {
	t, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	s := drivers.StatusOf(id, t.startedAt, t.result, t.completedAt)
	s.Pid = t.pid
	return s, nil
}

// TaskStats sums memory and CPU over the task's process group.
func (d *Driver) TaskStats(id string) (*drivers.TaskResourceUsage, error) {
	t, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	if d.opts.Isolation != nil {
		u, err := d.opts.Isolation.Stats(t.cfg, t.isoState)
		if err != nil {
			return nil, err
		}
		u.Timestamp = d.clock.Now()
		return u, nil
	}
	u := &drivers.TaskResourceUsage{Timestamp: d.clock.Now()}
	page := uint64(os.Getpagesize())
	for _, st := range groupMembers(t.pid) {
		u.Pids++
		u.MemoryRSS += st.RSSPages * page
		u.CPUTotalSeconds += float64(st.UTime+st.STime) / clockTicks
	}
	return u, nil
}

// Capabilities declares what the task runner must know of the driver's
// tasks (drivers.CapabilitiesDriver).
func (d *Driver) Capabilities() drivers.Capabilities {
	if d.opts.Capabilities != nil {
		return *d.opts.Capabilities
	}
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationNone, HostEnv: true}
}

// Shutdown stops every waiter goroutine and waits for them. Processes keep
// running so that the next client can re-attach.
func (d *Driver) Shutdown() {
	d.mu.Lock()
	for _, t := range d.tasks {
		select {
		case <-t.done:
		default:
			t.waiter.Stop()
		}
	}
	d.mu.Unlock()
	d.wg.Wait()
}

// resolveCommand finds the binary: absolute paths as they are, paths with a
// slash relative to the task directory, bare names on the task's PATH.
func resolveCommand(command string, cfg *drivers.TaskConfig) (string, error) {
	if filepath.IsAbs(command) {
		return command, nil
	}
	if strings.ContainsRune(command, '/') {
		return filepath.Join(cfg.TaskDir, command), nil
	}
	if p, ok := cfg.Env["PATH"]; ok {
		for _, dir := range filepath.SplitList(p) {
			cand := filepath.Join(dir, command)
			if fi, err := os.Stat(cand); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
				return cand, nil
			}
		}
	}
	path, err := exec.LookPath(command)
	if err != nil {
		return "", fmt.Errorf("command %q not found on PATH", command)
	}
	return path, nil
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
