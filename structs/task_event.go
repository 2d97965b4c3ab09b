package structs

import (
	"maps"
	"time"
)

// TaskEvent is one entry in a task's history, shown by `alloc status`.
//
// Every server holds every alloc's events (two or three for a task that
// started, more as it restarts or stops), so the struct is kept small: the
// fields nearly every event sets are fields, and the ones only a few kinds
// of event set (a restart's reason and delay, a kill's timeout, an exit
// code, an error of one step) live in an extra part that is nil for an
// event that sets none of them. An event of the common fields takes 80
// bytes of heap where the flat struct of all twenty took 256.
//
// The rare fields are read with getters of their own names (ExitCode(),
// RestartReason()) and set with setters that return the event, so they
// chain: newEvent(...).SetKillTimeout(d).SetKillReason(r). A getter of an
// event without the extra part returns the zero value; nothing panics.
//
// The encodings are those of the flat struct, byte for byte: msgpack (RPC,
// the raft log and snapshots) and JSON (the HTTP API, Nomad's shape, every
// field present). task_event_codec.go converts through that shape.
type TaskEvent struct {
	Type           string
	Time           int64
	Message        string
	DisplayMessage string
	Details        map[string]string
	FailsTask      bool

	// *taskEventExtra is embedded, rather than a named field, so that code
	// reading the type by reflection sees every wire field by its name (the
	// RPC decoder's cost estimate, helper/rpcx, charges a message by the
	// fields it names). Its promoted fields are shadowed by the getters of
	// the same names, so no code outside this package can reach one
	// through a nil pointer. It is never changed in place once set: the
	// setters replace it, so events sharing one (shallow copies, the state
	// store's versions) never see each other's changes. An all-zero extra
	// part is always nil, so reflect.DeepEqual compares events by what
	// they hold, as it did the flat struct.
	*taskEventExtra
}

// taskEventExtra holds the fields of a TaskEvent that few events set.
type taskEventExtra struct {
	RestartReason   string
	DriverError     string
	ExitCode        int
	Signal          int
	KillTimeout     time.Duration
	KillError       string
	KillReason      string
	StartDelay      int64
	DownloadError   string
	ValidationError string
	DiskLimit       int64
	FailedSibling   string
	TaskSignal      string
	DriverMessage   string
}

// Task event types.
const (
	TaskReceived          = "Received"
	TaskSetup             = "Task Setup"
	TaskStarted           = "Started"
	TaskTerminated        = "Terminated"
	TaskKilling           = "Killing"
	TaskKilled            = "Killed"
	TaskRestarting        = "Restarting"
	TaskNotRestarting     = "Not Restarting"
	TaskDriverFailure     = "Driver Failure"
	TaskFailedValidation  = "Failed Validation"
	TaskSiblingFailed     = "Sibling Task Failed"
	TaskRestoreFailed     = "Failed Restoring Task"
	TaskClientReconnected = "Reconnected"
	// TaskHookFailed is a step before the start that failed, such as a
	// template that could not be rendered (Nomad's wording).
	TaskHookFailed = "Task hook failed"
)

// Copy returns a deep copy.
func (e *TaskEvent) Copy() *TaskEvent {
	if e == nil {
		return nil
	}
	c := *e
	c.Details = maps.Clone(e.Details)
	c.taskEventExtra = copyPtr(e.taskEventExtra)
	return &c
}

// ShareStrings replaces each text field of e (not Details) by what share
// returns for it. The state store passes its interner, so that the texts
// thousands of events repeat ("Task started by client") are held once.
// The extra part is replaced, not changed, as by the setters.
func (e *TaskEvent) ShareStrings(share func(string) string) {
	if e == nil {
		return
	}
	for _, s := range []*string{&e.Type, &e.Message, &e.DisplayMessage} {
		*s = share(*s)
	}
	if e.taskEventExtra == nil {
		return
	}
	x := *e.taskEventExtra
	for _, s := range []*string{
		&x.RestartReason, &x.DriverError, &x.KillError, &x.KillReason, &x.DownloadError,
		&x.ValidationError, &x.FailedSibling, &x.TaskSignal, &x.DriverMessage,
	} {
		*s = share(*s)
	}
	e.taskEventExtra = &x
}

// extra returns the extra part, or a zero one for an event without it.
func (e *TaskEvent) extra() *taskEventExtra {
	if e == nil || e.taskEventExtra == nil {
		return &zeroTaskEventExtra
	}
	return e.taskEventExtra
}

// zeroTaskEventExtra is what the getters read for an event without an
// extra part. Nothing writes it.
var zeroTaskEventExtra taskEventExtra

// setExtra replaces e's extra part with a copy that set has changed, or
// with nil if the copy is all zero.
func (e *TaskEvent) setExtra(set func(x *taskEventExtra)) *TaskEvent {
	x := *e.extra()
	set(&x)
	if x == (taskEventExtra{}) {
		e.taskEventExtra = nil
	} else {
		e.taskEventExtra = &x
	}
	return e
}

// RestartReason is why the task is (or is not) restarted.
func (e *TaskEvent) RestartReason() string { return e.extra().RestartReason }

// DriverError is the driver's error, on a driver failure.
func (e *TaskEvent) DriverError() string { return e.extra().DriverError }

// ExitCode is the task's exit code, on termination.
func (e *TaskEvent) ExitCode() int { return e.extra().ExitCode }

// Signal is the signal that ended the task, on termination.
func (e *TaskEvent) Signal() int { return e.extra().Signal }

// KillTimeout is how long the task has to stop before it is killed.
func (e *TaskEvent) KillTimeout() time.Duration { return e.extra().KillTimeout }

// KillError is the error killing the task returned.
func (e *TaskEvent) KillError() string { return e.extra().KillError }

// KillReason is why the task is being killed.
func (e *TaskEvent) KillReason() string { return e.extra().KillReason }

// StartDelay is how long, in nanoseconds, until the task is restarted.
func (e *TaskEvent) StartDelay() int64 { return e.extra().StartDelay }

// DownloadError is the error of an artifact that failed to download.
func (e *TaskEvent) DownloadError() string { return e.extra().DownloadError }

// ValidationError is the error of a task that failed validation.
func (e *TaskEvent) ValidationError() string { return e.extra().ValidationError }

// DiskLimit is the disk limit, in MB, of a task that exceeded it.
func (e *TaskEvent) DiskLimit() int64 { return e.extra().DiskLimit }

// FailedSibling is the task whose failure stopped this one.
func (e *TaskEvent) FailedSibling() string { return e.extra().FailedSibling }

// TaskSignal is the signal sent to the task.
func (e *TaskEvent) TaskSignal() string { return e.extra().TaskSignal }

// DriverMessage is a message from the driver.
func (e *TaskEvent) DriverMessage() string { return e.extra().DriverMessage }

// SetRestartReason sets RestartReason and returns e.
func (e *TaskEvent) SetRestartReason(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.RestartReason = s })
}

// SetDriverError sets DriverError and returns e.
func (e *TaskEvent) SetDriverError(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.DriverError = s })
}

// SetExitCode sets ExitCode and returns e.
func (e *TaskEvent) SetExitCode(c int) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.ExitCode = c })
}

// SetSignal sets Signal and returns e.
func (e *TaskEvent) SetSignal(s int) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.Signal = s })
}

// SetKillTimeout sets KillTimeout and returns e.
func (e *TaskEvent) SetKillTimeout(d time.Duration) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.KillTimeout = d })
}

// SetKillError sets KillError and returns e.
func (e *TaskEvent) SetKillError(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.KillError = s })
}

// SetKillReason sets KillReason and returns e.
func (e *TaskEvent) SetKillReason(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.KillReason = s })
}

// SetStartDelay sets StartDelay (nanoseconds) and returns e.
func (e *TaskEvent) SetStartDelay(d int64) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.StartDelay = d })
}

// SetDownloadError sets DownloadError and returns e.
func (e *TaskEvent) SetDownloadError(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.DownloadError = s })
}

// SetValidationError sets ValidationError and returns e.
func (e *TaskEvent) SetValidationError(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.ValidationError = s })
}

// SetDiskLimit sets DiskLimit and returns e.
func (e *TaskEvent) SetDiskLimit(mb int64) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.DiskLimit = mb })
}

// SetFailedSibling sets FailedSibling and returns e.
func (e *TaskEvent) SetFailedSibling(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.FailedSibling = s })
}

// SetTaskSignal sets TaskSignal and returns e.
func (e *TaskEvent) SetTaskSignal(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.TaskSignal = s })
}

// SetDriverMessage sets DriverMessage and returns e.
func (e *TaskEvent) SetDriverMessage(s string) *TaskEvent {
	return e.setExtra(func(x *taskEventExtra) { x.DriverMessage = s })
}
