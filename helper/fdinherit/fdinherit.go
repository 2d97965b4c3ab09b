// Package fdinherit keeps what the agent's parent left open away from
// the agent's tasks.
//
// Go opens its own descriptors close-on-exec, but it does nothing about
// descriptors the process inherited: a shell, a supervisor or a CI runner
// that leaves one inheritable hands it, through the agent, to every
// raw_exec task and docker plugin the agent starts. A task could then
// read or write whatever that descriptor is (a pipe to the supervisor, a
// log file, a socket).
package fdinherit

import "golang.org/x/sys/unix"

// CloseOnExec marks every descriptor from 3 on close-on-exec, so that a
// child gets only stdio and what its starter passes on purpose. The
// process keeps using them.
func CloseOnExec() { CloseOnExecFrom(3) }

// CloseOnExecFrom is CloseOnExec for the descriptors from first on, for a
// process that keeps a known run below first for its next exec.
func CloseOnExecFrom(first int) {
	// close_range(2) with CLOSE_RANGE_CLOEXEC does it in one call (Linux
	// 5.11); older kernels get the loop.
	if err := unix.CloseRange(uint(first), ^uint(0), closeRangeCloexec); err == nil {
		return
	}
	for fd := first; fd < maxScan; fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			continue
		}
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC)
	}
}

// closeRangeCloexec is CLOSE_RANGE_CLOEXEC from linux/close_range.h.
const closeRangeCloexec = 1 << 2

// maxScan bounds the fallback's scan; the agent raises no descriptor
// limit before it runs.
const maxScan = 4096
