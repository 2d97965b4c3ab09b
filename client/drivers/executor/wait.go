package executor

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/clock"
)

// waiter waits for one process to exit. Stop makes Wait return nil early
// without touching the process.
type waiter struct {
	pid        int
	startTicks uint64
	clock      clock.Clock
	poll       time.Duration
	// stopR/stopW are a pipe: closing stopW wakes a poll(2) on stopR.
	stopR, stopW int
	stopCh       chan struct{}
}

func newWaiter(pid int, startTicks uint64, clk clock.Clock, poll time.Duration) (*waiter, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	return &waiter{pid: pid, startTicks: startTicks, clock: clk, poll: poll, stopR: p[0], stopW: p[1], stopCh: make(chan struct{})}, nil
}

// Stop wakes Wait; it may be called once.
func (w *waiter) Stop() {
	close(w.stopCh)
	unix.Close(w.stopW)
}

// Wait blocks until the process exits (and returns how) or Stop is called
// (and returns nil).
func (w *waiter) Wait() *drivers.ExitResult {
	defer unix.Close(w.stopR)
	pidfd, err := unix.PidfdOpen(w.pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) {
			return reap(w.pid)
		}
		return w.waitPolling()
	}
	defer unix.Close(pidfd)
	// The pidfd pins the process we opened; check it is the one we started,
	// not a later process that was given the same pid.
	if st, err := readProcStat(w.pid); err != nil || st.StartTicks != w.startTicks {
		return &drivers.ExitResult{ExitUnknown: true}
	}
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}, {Fd: int32(w.stopR), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		_, err := unix.Poll(fds, -1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return w.waitPolling()
		}
		if fds[1].Revents != 0 {
			return nil
		}
		if fds[0].Revents != 0 {
			return reap(w.pid)
		}
	}
}

// waitPolling is the fallback for kernels without pidfd_open (before 5.3).
func (w *waiter) waitPolling() *drivers.ExitResult {
	for {
		st, err := readProcStat(w.pid)
		if err != nil || st.StartTicks != w.startTicks {
			return &drivers.ExitResult{ExitUnknown: true}
		}
		if st.State == 'Z' || st.State == 'X' {
			return reap(w.pid)
		}
		select {
		case <-w.stopCh:
			return nil
		case <-w.clock.After(w.poll):
		}
	}
}

// reap collects the exit status if the process is our child, and reports
// the exit as unknown otherwise.
func reap(pid int) *drivers.ExitResult {
	var ws unix.WaitStatus
	for {
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || got != pid {
			return &drivers.ExitResult{ExitUnknown: true}
		}
		break
	}
	switch {
	case ws.Exited():
		return &drivers.ExitResult{ExitCode: ws.ExitStatus()}
	case ws.Signaled():
		return &drivers.ExitResult{ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}
	}
	return &drivers.ExitResult{ExitUnknown: true}
}

// reapBlocking waits for our child pid, which was just killed, to exit.
func reapBlocking(pid int) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
