package taskrunner

import (
	"fmt"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// maxEvents is how many task events are kept, as in Nomad; events are for
// humans (AllocState is the machine record of disconnects).
const maxEvents = 10

func newEvent(typ string, now time.Time) *structs.TaskEvent {
	return &structs.TaskEvent{Type: typ, Time: now.UnixNano(), Details: map[string]string{}}
}

func receivedEvent(now time.Time) *structs.TaskEvent {
	e := newEvent(structs.TaskReceived, now)
	e.DisplayMessage = "Task received by client"
	return e
}

func setupEvent(now time.Time) *structs.TaskEvent {
	e := newEvent(structs.TaskSetup, now)
	e.Message = "Building Task Directory"
	e.DisplayMessage = e.Message
	return e
}

func startedEvent(now time.Time) *structs.TaskEvent {
	e := newEvent(structs.TaskStarted, now)
	e.DisplayMessage = "Task started by client"
	return e
}

func terminatedEvent(now time.Time, res *drivers.ExitResult) *structs.TaskEvent {
	e := newEvent(structs.TaskTerminated, now)
	switch {
	case res.ExitUnknown:
		e.Details["exit_code"] = "unknown"
		e.Message = "exit status unknown: the task exited while the client could not watch it"
		e.DisplayMessage = e.Message
	default:
		e.SetExitCode(res.ExitCode).SetSignal(res.Signal)
		e.Details["exit_code"] = fmt.Sprint(res.ExitCode)
		e.Details["signal"] = fmt.Sprint(res.Signal)
		e.DisplayMessage = fmt.Sprintf("Exit Code: %d", res.ExitCode)
		if res.Signal != 0 {
			e.DisplayMessage += fmt.Sprintf(", Signal: %d", res.Signal)
		}
		if res.OOMKilled {
			e.Details["oom_killed"] = "true"
			e.DisplayMessage += ", OOM Killed"
		}
	}
	if res.Err != nil {
		e.Message = res.Err.Error()
	}
	return e
}

func restartingEvent(now time.Time, delay time.Duration, reason string) *structs.TaskEvent {
	e := newEvent(structs.TaskRestarting, now)
	e.SetStartDelay(int64(delay)).SetRestartReason(reason)
	e.DisplayMessage = fmt.Sprintf("%s - Task restarting in %v", reason, delay)
	return e
}

func notRestartingEvent(now time.Time, reason string) *structs.TaskEvent {
	e := newEvent(structs.TaskNotRestarting, now)
	e.FailsTask = true
	e.SetRestartReason(reason)
	e.DisplayMessage = reason
	return e
}

func driverFailureEvent(now time.Time, err error) *structs.TaskEvent {
	e := newEvent(structs.TaskDriverFailure, now)
	e.SetDriverError(err.Error())
	e.DisplayMessage = "Driver failure: " + err.Error()
	return e
}

func killingEvent(now time.Time, timeout time.Duration, reason string) *structs.TaskEvent {
	e := newEvent(structs.TaskKilling, now)
	e.SetKillTimeout(timeout).SetKillReason(reason)
	e.DisplayMessage = fmt.Sprintf("Sent interrupt. Waiting %v before force killing", timeout)
	return e
}

func killedEvent(now time.Time, err error) *structs.TaskEvent {
	e := newEvent(structs.TaskKilled, now)
	e.DisplayMessage = "Task successfully killed"
	if err != nil {
		e.SetKillError(err.Error())
		e.DisplayMessage = "Task killed with error: " + err.Error()
	}
	return e
}

// hookFailedEvent reports a prestart hook that failed, as Nomad reports
// one: the error as the message, "Task hook failed: <error>" as the text
// shown. A hook with more precise words or an event type of its own
// (templates, artifacts) makes its own event.
func hookFailedEvent(now time.Time, err error) *structs.TaskEvent {
	e := newEvent(structs.TaskHookFailed, now)
	e.Message = err.Error()
	e.DisplayMessage = "Task hook failed: " + err.Error()
	return e
}
