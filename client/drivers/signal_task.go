package drivers

import (
	"errors"
	"sort"
)

// Signaller is implemented by drivers that can deliver a signal to a
// running task without stopping it (a user's `alloc signal`, such as
// SIGHUP to reload a config). It is separate from Driver because a
// simulated task has nothing to deliver a signal to; the task runner
// reports ErrSignalsUnsupported for a driver without it.
type Signaller interface {
	// SignalTask sends the named signal (see ParseSignal) to the task. It
	// does not wait for the task to react.
	SignalTask(taskID, signal string) error
}

// ErrSignalsUnsupported is returned for a signal to a task whose driver
// cannot deliver one.
var ErrSignalsUnsupported = errors.New("the task's driver does not support signals")

// SignalNames lists the signal names ParseSignal accepts, sorted, for
// error messages that say what is valid.
func SignalNames() []string {
	out := make([]string, 0, len(signals))
	for name := range signals {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
