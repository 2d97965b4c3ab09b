package drivers

import (
	"context"
	"errors"
	"time"

	"github.com/drover-sched/drover/structs"
)

// Driver runs tasks. Every method is safe for concurrent use; task IDs are
// unique per start (the task runner makes a fresh one for each attempt).
type Driver interface {
	// Name is the name jobspecs use in `driver = "..."`.
	Name() string

	// Fingerprint reports whether the driver can run tasks on this node,
	// with the attributes it advertises (driver.<name>.* without the
	// prefix). A driver that is disabled by configuration is not Detected.
	Fingerprint() *structs.DriverInfo

	// StartTask starts the task and returns a handle that RecoverTask can
	// later use to re-attach to it. An error wrapped in RecoverableError
	// may be retried under the restart policy; any other error fails the
	// task.
	StartTask(cfg *TaskConfig) (*TaskHandle, error)

	// WaitTask returns a channel that receives one ExitResult when the task
	// exits, then is closed. Cancelling ctx closes the channel without a
	// result; it does not affect the task.
	WaitTask(ctx context.Context, taskID string) (<-chan *ExitResult, error)

	// StopTask sends signal (the driver's default when empty) and, if the
	// task has not exited after timeout, kills it. It returns once the task
	// has exited or was sent the kill.
	StopTask(taskID string, timeout time.Duration, signal string) error

	// DestroyTask frees everything the driver holds for the task. With
	// force it kills a task that is still running; without, it refuses.
	DestroyTask(taskID string, force bool) error

	// RecoverTask re-attaches to a task started by an earlier client
	// process, from the handle that StartTask returned then. It returns
	// ErrTaskNotFound when the task is gone (the process exited, or its pid
	// now belongs to another process).
	RecoverTask(h *TaskHandle) error

	// InspectTask returns the task's current status.
	InspectTask(taskID string) (*TaskStatus, error)

	// TaskStats samples the task's resource usage.
	TaskStats(taskID string) (*TaskResourceUsage, error)
}

// Sentinel errors.
var (
	// ErrTaskNotFound means the driver has no such task (never started, or
	// destroyed, or not recoverable).
	ErrTaskNotFound = errors.New("task not found")
	// ErrTaskRunning is returned by DestroyTask without force on a live task.
	ErrTaskRunning = errors.New("task is still running")
	// ErrDisabled is returned by StartTask of a driver disabled by config.
	ErrDisabled = errors.New("driver is disabled")
)

// RecoverableError marks a start failure worth retrying (a transient
// resource problem rather than a bad config).
type RecoverableError struct{ Err error }

func (r *RecoverableError) Error() string { return r.Err.Error() }
func (r *RecoverableError) Unwrap() error { return r.Err }

// IsRecoverable reports whether err is wrapped in RecoverableError.
func IsRecoverable(err error) bool {
	var r *RecoverableError
	return errors.As(err, &r)
}

// TaskConfig is everything a driver needs to start one attempt of a task.
// The task runner has already interpolated Config and Env.
type TaskConfig struct {
	// ID is unique per start attempt: "<allocID>/<task>/<random>".
	ID        string
	AllocID   string
	TaskName  string
	JobName   string
	GroupName string
	User      string
	// Config is the task's driver config block after interpolation.
	Config map[string]any
	// Env is the complete environment of the task.
	Env map[string]string
	// AllocDir is the alloc's root; TaskDir is the task's directory (which
	// holds local/ and secrets/); Dir is the working directory.
	AllocDir string
	TaskDir  string
	Dir      string
	// StdoutPath and StderrPath are FIFOs the task runner reads and turns
	// into rotated log files. A driver opens them for writing.
	StdoutPath string
	StderrPath string
	Resources  TaskResources
	// NetNSPath names the alloc's network namespace (group network mode
	// bridge, none or cni/*), which every task of the alloc joins; empty
	// is the host's network. raw_exec ignores it, as in Nomad.
	NetNSPath string
	// ResolvConfPath is a host file written from the group's dns block,
	// the task's /etc/resolv.conf; DNS is the block itself, for drivers
	// that take it as options (docker).
	ResolvConfPath string
	DNS            *structs.DNSConfig
	// Mounts are the task's volume_mount blocks resolved to host paths
	// (the client's host volumes). exec binds them into the chroot and
	// docker into the container; raw_exec, which has no root of its own,
	// gets none.
	Mounts []MountConfig
}

// AllocNetwork is an alloc's own network namespace, which every task of
// the alloc joins (TaskConfig's fields of the same names).
type AllocNetwork struct {
	NetNSPath      string
	ResolvConfPath string
	DNS            *structs.DNSConfig
}

// MountConfig is one host path a task sees at TaskPath.
type MountConfig struct {
	// TaskPath is the absolute path inside the task.
	TaskPath string
	// HostPath is the host directory (or file) that is mounted.
	HostPath string
	// Readonly is set when the host volume, the group's volume block or
	// the task's volume_mount says read_only.
	Readonly bool
	// PropagationMode is private, host-to-task or bidirectional.
	PropagationMode string
}

// TaskResources are the limits the scheduler granted the task.
type TaskResources struct {
	CPUShares   int64
	MemoryMB    int64
	MemoryMaxMB int64
	// Cores are the CPU cores reserved for the task (resources.cores);
	// exec confines the task to them with a cpuset.
	Cores []uint16
	// Ports are the alloc's assigned ports by label: host value, host IP
	// and the `to` port inside the task's network. Drivers that publish
	// ports (docker) map them; others ignore them.
	Ports []structs.AllocatedPortMapping
}

// EnvList returns Env as "K=V" pairs.
func (c *TaskConfig) EnvList() []string {
	out := make([]string, 0, len(c.Env))
	for k, v := range c.Env {
		out = append(out, k+"="+v)
	}
	return out
}

// TaskHandle is what the client stores to re-attach to a task after it
// restarts. DriverState is opaque to everyone but the driver.
type TaskHandle struct {
	Version     int
	Driver      string
	TaskID      string
	Config      *TaskConfig
	StartedAt   time.Time
	DriverState []byte
}

// ExitResult is how a task ended. ExitUnknown means the driver could not
// learn the exit code (a re-attached process that is not the client's
// child); callers must not read ExitCode then.
type ExitResult struct {
	ExitCode    int
	Signal      int
	OOMKilled   bool
	ExitUnknown bool
	Err         error
}

// Successful reports a clean exit with code 0.
func (e *ExitResult) Successful() bool {
	return e != nil && !e.ExitUnknown && e.ExitCode == 0 && e.Signal == 0 && e.Err == nil
}

// Task run states reported by InspectTask.
const (
	TaskStateRunning = "running"
	TaskStateExited  = "exited"
)

// TaskStatus is InspectTask's answer.
type TaskStatus struct {
	ID          string
	State       string
	StartedAt   time.Time
	CompletedAt time.Time
	ExitResult  *ExitResult
	Pid         int
}

// TaskResourceUsage is one sample of a task's resource use.
type TaskResourceUsage struct {
	Timestamp time.Time
	// MemoryRSS is resident memory in bytes.
	MemoryRSS uint64
	// CPUTotalTicks is user+system CPU time consumed, in seconds.
	CPUTotalSeconds float64
	Pids            int
}
