package execinit

import (
	"errors"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// supervisor is pid 1's life once the task runs: forward signals, reap
// every process that re-parents to it, and end when the task's main
// process ends. When pid 1 exits the kernel kills whatever is left in the
// namespace, so nothing the task started (setsid, double forks, daemons)
// survives it.
type supervisor struct {
	pid  int
	sigs chan os.Signal
}

func newSupervisor() *supervisor {
	s := &supervisor{sigs: make(chan os.Signal, 64)}
	// Pid 1 only receives the signals it has handlers for: catching them
	// all is what lets kill_signal through.
	signal.Notify(s.sigs)
	return s
}

func (s *supervisor) stop() { signal.Stop(s.sigs) }

func (s *supervisor) run() Status {
	for sig := range s.sigs {
		switch sig {
		case unix.SIGCHLD:
			if st, done := s.reap(); done {
				return st
			}
		case unix.SIGURG:
			// The Go runtime's own preemption signal, not the task's:
			// the init cannot tell one sent to it from its own, so a
			// SIGURG (or SIGCHLD) for the task is sent to the task's
			// processes by the driver instead (exec's Signal).
		default:
			// To the task's process group: a shell's foreground child
			// must see a stop signal too (see the executor's doc).
			if err := unix.Kill(-s.pid, sig.(syscall.Signal)); errors.Is(err, unix.ESRCH) {
				_ = unix.Kill(s.pid, sig.(syscall.Signal))
			}
		}
	}
	return Status{Exited: true, ExitCode: 1}
}

// reap collects every exited child; done is true once the task's main
// process is among them.
func (s *supervisor) reap() (Status, bool) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return Status{}, false
		}
		if pid != s.pid {
			continue
		}
		switch {
		case ws.Signaled():
			return Status{Exited: true, ExitCode: 128 + int(ws.Signal()), Signal: int(ws.Signal())}, true
		default:
			return Status{Exited: true, ExitCode: ws.ExitStatus()}, true
		}
	}
}
