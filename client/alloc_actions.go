package client

import (
	"context"
	"fmt"
	"strings"

	"github.com/drover-sched/drover/client/allocrunner"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/structs"
)

// What a user may do to an alloc this client runs, beyond reading it:
// restart or signal its tasks in place, and remove a finished alloc's
// directory now rather than when the GC gets to it.

// ErrUnknownSignal is a signal name Drover cannot send.
var ErrUnknownSignal = structs.NewCodedError("UnknownSignal", "unknown signal")

// ErrAllocNotTerminal refuses to collect an alloc that still runs (or
// whose tasks are still stopping).
var ErrAllocNotTerminal = structs.NewCodedError("AllocNotTerminal", "allocation is not terminal")

// RestartAlloc restarts task, or every running task when task is "",
// without counting against the restart policy. It returns once the old
// processes have exited.
func (c *Client) RestartAlloc(ctx context.Context, allocID, task string) error {
	ar, err := c.actionRunner(allocID, task)
	if err != nil {
		return err
	}
	return ar.RestartTasks(ctx, task)
}

// SignalAlloc sends signal to task, or to every running task when task is
// "".
func (c *Client) SignalAlloc(ctx context.Context, allocID, task, signal string) error {
	if err := CheckSignal(signal); err != nil {
		return err
	}
	ar, err := c.actionRunner(allocID, task)
	if err != nil {
		return err
	}
	return ar.SignalTasks(ctx, task, signal)
}

// CheckSignal refuses a signal name Drover cannot send, listing those it
// can.
func CheckSignal(signal string) error {
	valid := strings.Join(drivers.SignalNames(), ", ")
	if signal == "" {
		return fmt.Errorf("%w: no signal named; use one of %s", ErrUnknownSignal, valid)
	}
	if _, err := drivers.ParseSignal(signal, 0); err != nil {
		return fmt.Errorf("%w %q: use one of %s", ErrUnknownSignal, signal, valid)
	}
	return nil
}

// GCAlloc destroys a terminal alloc's directory and forgets it, as the GC
// would; its logs and files are gone afterwards.
func (c *Client) GCAlloc(allocID string) error {
	ar := c.runner(allocID)
	if ar == nil {
		return fmt.Errorf("%w %s", ErrUnknownAlloc, allocID)
	}
	if !ar.IsTerminal() {
		return fmt.Errorf("%w: allocation %s is %s; stop it first (alloc stop or job stop)",
			ErrAllocNotTerminal, structs.ShortID(allocID), ar.Alloc().ClientStatus)
	}
	c.gc.Remove(allocID)
	return c.destroyRunner(ar)
}

// actionRunner finds the runner of allocID and checks that task ("" for
// all) is one of its tasks.
func (c *Client) actionRunner(allocID, task string) (*allocrunner.AllocRunner, error) {
	ar := c.runner(allocID)
	if ar == nil {
		return nil, fmt.Errorf("%w %s", ErrUnknownAlloc, allocID)
	}
	if task != "" && ar.TaskState(task) == nil {
		if tg := ar.Alloc().LookupTaskGroup(); tg == nil || tg.LookupTask(task) == nil {
			return nil, fmt.Errorf("%w %q in alloc %s", ErrUnknownTask, task, structs.ShortID(allocID))
		}
	}
	return ar, nil
}
