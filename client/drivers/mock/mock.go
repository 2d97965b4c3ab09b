package mock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// Name is the driver name used in jobspecs.
const Name = "mock_driver"

// Alias is accepted too, because the brief and tests call it "mock".
const Alias = "mock"

// Driver is the mock driver.
type Driver struct {
	name  string
	clock clock.Clock

	mu     sync.Mutex
	tasks  map[string]*task
	starts int
	wg     sync.WaitGroup
}

type taskConfig struct {
	RunFor               time.Duration
	ExitCode             int64
	StartError           string
	StartErrorRecover    bool
	KillAfter            time.Duration
	StdoutString         string
	StdoutRepeat         int64
	StdoutRepeatDuration time.Duration
}

type task struct {
	cfg       *drivers.TaskConfig
	tc        taskConfig
	stdout    *os.File // nil when there is nothing to write
	startedAt time.Time
	stop      chan syscall.Signal // StopTask's signal
	force     chan struct{}       // closed to kill at once
	forceOnce sync.Once
	shutdown  chan struct{}
	done      chan struct{}
	result    *drivers.ExitResult
	ended     time.Time
}

// New returns a mock driver registered under name (Name or Alias).
func New(name string, clk clock.Clock) *Driver {
	if name == "" {
		name = Name
	}
	return &Driver{name: name, clock: clock.OrReal(clk), tasks: map[string]*task{}}
}

// Name returns the driver name.
func (d *Driver) Name() string { return d.name }

// Capabilities: a mock task runs no process and touches no file; it is
// treated as raw_exec's are (host paths, the agent's environment less
// env.denylist), so a job that tests with mock sees the variables a
// raw_exec job would. Tests of isolation wrap it in a driver that
// declares otherwise.
func (d *Driver) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationNone, HostEnv: true}
}

// Starts counts successful StartTask calls, for tests that check a task was
// (not) restarted.
func (d *Driver) Starts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.starts
}

// Fingerprint always reports the driver healthy.
func (d *Driver) Fingerprint() *structs.DriverInfo {
	return &structs.DriverInfo{Detected: true, Healthy: true, HealthDescription: "Healthy", UpdateTime: d.clock.Now(), Attributes: map[string]string{}}
}

func parse(cfg map[string]any) (taskConfig, error) {
	var tc taskConfig
	var err error
	errs := []error{}
	grab := func(e error) { errs = append(errs, e) }
	tc.RunFor, err = drivers.ConfigDuration(cfg, structs.MockConfigRunFor)
	grab(err)
	tc.ExitCode, err = drivers.ConfigInt(cfg, structs.MockConfigExitCode, 0)
	grab(err)
	tc.StartError, err = drivers.ConfigString(cfg, structs.MockConfigStartError)
	grab(err)
	tc.StartErrorRecover, err = drivers.ConfigBool(cfg, structs.MockConfigStartErrorRecoverable)
	grab(err)
	tc.KillAfter, err = drivers.ConfigDuration(cfg, structs.MockConfigKillAfter)
	grab(err)
	tc.StdoutString, err = drivers.ConfigString(cfg, structs.MockConfigStdoutString)
	grab(err)
	tc.StdoutRepeat, err = drivers.ConfigInt(cfg, structs.MockConfigStdoutRepeat, 0)
	grab(err)
	tc.StdoutRepeatDuration, err = drivers.ConfigDuration(cfg, structs.MockConfigStdoutRepeatDuration)
	grab(err)
	return tc, errors.Join(errs...)
}

// StartTask starts a simulated task.
func (d *Driver) StartTask(cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	tc, err := parse(cfg.Config)
	if err != nil {
		return nil, err
	}
	if tc.StartError != "" {
		err := errors.New(tc.StartError)
		if tc.StartErrorRecover {
			return nil, &drivers.RecoverableError{Err: err}
		}
		return nil, err
	}
	// Open stdout now, not in the task's goroutine: the task runner starts
	// reading once StartTask returns, and a FIFO with no writer yet reads
	// as end of file.
	var stdout *os.File
	if tc.StdoutString != "" && cfg.StdoutPath != "" {
		if fd, err := unix.Open(cfg.StdoutPath, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			stdout = os.NewFile(uintptr(fd), cfg.StdoutPath)
		}
	}
	now := d.clock.Now()
	d.launch(cfg, tc, now, stdout)
	d.mu.Lock()
	d.starts++
	d.mu.Unlock()
	state, _ := json.Marshal(map[string]any{"StartedAt": now})
	return &drivers.TaskHandle{Version: 1, Driver: d.name, TaskID: cfg.ID, Config: cfg, StartedAt: now, DriverState: state}, nil
}

func (d *Driver) launch(cfg *drivers.TaskConfig, tc taskConfig, startedAt time.Time, stdout *os.File) {
	t := &task{cfg: cfg, tc: tc, startedAt: startedAt, stdout: stdout, stop: make(chan syscall.Signal, 1),
		force: make(chan struct{}), shutdown: make(chan struct{}), done: make(chan struct{})}
	d.mu.Lock()
	d.tasks[cfg.ID] = t
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		res := d.run(t)
		d.mu.Lock()
		t.result, t.ended = res, d.clock.Now()
		d.mu.Unlock()
		close(t.done)
	}()
}

// run is the simulated process. It returns nil only on Shutdown.
func (d *Driver) run(t *task) *drivers.ExitResult {
	if t.stdout != nil {
		d.writeStdout(t)
	}
	var exit <-chan time.Time
	if t.tc.RunFor > 0 {
		exit = d.clock.After(t.tc.RunFor - d.clock.Now().Sub(t.startedAt))
	}
	select {
	case <-exit:
		return &drivers.ExitResult{ExitCode: int(t.tc.ExitCode)}
	case <-t.force:
		return &drivers.ExitResult{ExitCode: 128 + 9, Signal: int(syscall.SIGKILL)}
	case <-t.shutdown:
		return nil
	case sig := <-t.stop:
		if t.tc.KillAfter > 0 {
			select {
			case <-d.clock.After(t.tc.KillAfter):
			case <-t.force:
				return &drivers.ExitResult{ExitCode: 128 + 9, Signal: int(syscall.SIGKILL)}
			case <-t.shutdown:
				return nil
			}
		}
		return &drivers.ExitResult{ExitCode: 128 + int(sig), Signal: int(sig)}
	}
}

// writeStdout writes stdout_string once, or stdout_repeat times spaced by
// stdout_repeat_duration, to the task's stdout, then closes it.
func (d *Driver) writeStdout(t *task) {
	f := t.stdout
	defer f.Close()
	n := max(t.tc.StdoutRepeat, 1)
	for i := int64(0); i < n; i++ {
		if i > 0 && t.tc.StdoutRepeatDuration > 0 {
			select {
			case <-d.clock.After(t.tc.StdoutRepeatDuration):
			case sig := <-t.stop:
				// Put the signal back for run to see.
				t.stop <- sig
				return
			case <-t.shutdown:
				return
			}
		}
		if _, err := f.WriteString(t.tc.StdoutString); err != nil {
			return
		}
	}
}

func (d *Driver) lookup(id string) (*task, error) {
	return drivers.LookupTask(&d.mu, d.tasks, id)
}

// WaitTask delivers the exit result.
func (d *Driver) WaitTask(ctx context.Context, id string) (<-chan *drivers.ExitResult, error) {
	t, err := d.lookup(id)
	if err != nil {
		return nil, err
	}
	return drivers.WaitLocked(ctx, t.done, &d.mu, &t.result), nil
}

// StopTask delivers the signal and forces the exit after timeout.
func (d *Driver) StopTask(id string, timeout time.Duration, signal string) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	sig, err := drivers.ParseSignal(signal, syscall.SIGINT)
	if err != nil {
		return err
	}
	select {
	case t.stop <- sig:
	default:
	}
	select {
	case <-t.done:
	case <-d.clock.After(timeout):
		t.forceOnce.Do(func() { close(t.force) })
	}
	return nil
}

// DestroyTask forgets the task, killing it with force.
func (d *Driver) DestroyTask(id string, force bool) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	select {
	case <-t.done:
	default:
		if !force {
			return drivers.ErrTaskRunning
		}
		t.forceOnce.Do(func() { close(t.force) })
		<-t.done
	}
	d.mu.Lock()
	delete(d.tasks, id)
	d.mu.Unlock()
	return nil
}

// RecoverTask re-creates a task from its handle; it keeps running until its
// original run_for, counted from its original start.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	if h == nil || h.Config == nil {
		return fmt.Errorf("%w: empty handle", drivers.ErrTaskNotFound)
	}
	if _, err := d.lookup(h.Config.ID); err == nil {
		return nil
	}
	tc, err := parse(h.Config.Config)
	if err != nil {
		return fmt.Errorf("%w: %v", drivers.ErrTaskNotFound, err)
	}
	if tc.RunFor > 0 && !d.clock.Now().Before(h.StartedAt.Add(tc.RunFor)) {
		return fmt.Errorf("%w: the task's run_for has passed", drivers.ErrTaskNotFound)
	}
	d.launch(h.Config, tc, h.StartedAt, nil)
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
	return drivers.StatusOf(id, t.startedAt, t.result, t.ended), nil
}

// TaskStats reports zero usage.
func (d *Driver) TaskStats(id string) (*drivers.TaskResourceUsage, error) {
	if _, err := d.lookup(id); err != nil {
		return nil, err
	}
	return &drivers.TaskResourceUsage{Timestamp: d.clock.Now()}, nil
}

// Shutdown stops every task goroutine and waits for them.
func (d *Driver) Shutdown() {
	d.mu.Lock()
	for _, t := range d.tasks {
		select {
		case <-t.shutdown:
		default:
			close(t.shutdown)
		}
	}
	d.mu.Unlock()
	d.wg.Wait()
}
