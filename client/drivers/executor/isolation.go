package executor

import (
	"encoding/json"
	"os/exec"
	"syscall"

	"github.com/drover-sched/drover/client/drivers"
)

// Isolation confines a task: exec's namespaces, chroot, cgroups and
// credentials. raw_exec has none, and the executor then runs the command
// itself, as a plain process group.
//
// With an Isolation the process the executor starts, tracks and signals
// is whatever Command returns (exec's init), and everything the executor
// does to "the process group" reaches the task through it.
type Isolation interface {
	// Command returns the process that runs the task; command and args
	// are the jobspec's, uninterpreted. The executor adds the log
	// descriptors (Stdout, Stderr, and pass FIFO holders after any
	// ExtraFiles the Isolation set) and Setpgid. The count is the
	// Isolation's to hand on: a process it starts cannot tell the
	// executor's descriptors from ones a careless ancestor left
	// inheritable, and only the executor's may reach the task.
	Command(cfg *drivers.TaskConfig, command string, args []string, pass int) (*exec.Cmd, error)
	// Started finishes a start once the process (pid) runs, and returns state that the
	// task handle keeps for Recover. An error fails the start; the
	// executor then kills and reaps the process and calls Release.
	Started(cfg *drivers.TaskConfig, pid int) (json.RawMessage, error)
	// Exited completes the exit the executor observed (the signal, an
	// OOM kill). It is called once, for tasks this process started.
	Exited(cfg *drivers.TaskConfig, res *drivers.ExitResult) *drivers.ExitResult
	// Signal delivers a signal the executor's way (to the process group,
	// and so to exec's init) cannot; it reports whether it did.
	Signal(cfg *drivers.TaskConfig, state json.RawMessage, sig syscall.Signal) (bool, error)
	// Kill kills every process of the task, wherever it went.
	Kill(cfg *drivers.TaskConfig, state json.RawMessage)
	// Stats samples the task's usage.
	Stats(cfg *drivers.TaskConfig, state json.RawMessage) (*drivers.TaskResourceUsage, error)
	// ExecCommand returns a command that runs inside the task (pid is the
	// process Command started) and a function to call once it started,
	// before it runs anything of the caller's.
	ExecCommand(cfg *drivers.TaskConfig, state json.RawMessage, pid int, command string, args []string) (*exec.Cmd, func(*exec.Cmd) error, error)
	// Release removes what Started created, once the task is gone.
	Release(cfg *drivers.TaskConfig, state json.RawMessage)
}

// MakeExecutable is makeExecutable for an Isolation that resolves the
// command itself.
func MakeExecutable(path string, cfg *drivers.TaskConfig) error { return makeExecutable(path, cfg) }
