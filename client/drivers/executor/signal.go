package executor

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
)

var _ drivers.Signaller = (*Driver)(nil)

// SignalTask sends a signal to the task's process group, like every other
// signal the executor sends (see doc.go): a shell that runs its work in a
// foreground child only runs its trap once that child returns, so the
// child must see the signal too.
func (d *Driver) SignalTask(id, signal string) error {
	t, err := d.lookup(id)
	if err != nil {
		return err
	}
	if signal == "" {
		return errors.New("no signal named")
	}
	sig, err := drivers.ParseSignal(signal, 0)
	if err != nil {
		return err
	}
	if d.exited(t) {
		return fmt.Errorf("%w: %s has exited", drivers.ErrTaskNotFound, id)
	}
	if d.opts.Isolation != nil {
		if done, err := d.opts.Isolation.Signal(t.cfg, t.isoState, sig); done || err != nil {
			return err
		}
	}
	if err := unix.Kill(-t.pid, sig); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("%w: process group %d is gone", drivers.ErrTaskNotFound, t.pid)
		}
		return fmt.Errorf("signal %v to process group %d: %w", sig, t.pid, err)
	}
	return nil
}
