package execinit

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The init, once the task runs, keeps the least it needs to forward
// signals and reap: a task that could reach it (one given sys_ptrace)
// must find nothing worth taking.
//
//   - It is not dumpable, from before the task exists: no process without
//     CAP_SYS_PTRACE may attach to it or read its memory, even one of its
//     uid.
//   - For a non-root task it becomes the task's uid and gids before it
//     forks the task: every thread (Go's setresuid changes them all)
//     loses every capability; the forking thread keeps, for the fork,
//     only the capabilities the task gets, and drops those after. It
//     still signals the task, whose uid it shares.
//   - For a root task it keeps uid 0 and CAP_KILL only. Capabilities are
//     per thread and Go sets them on every thread only without cgo
//     (syscall.AllThreadsSyscall); a cgo build drops them on the init's
//     main thread (the one that forwards signals) alone.
//
// The init's main goroutine is locked to its thread (see run), which
// forks the task and sends every signal.

// shedBeforeTask runs on the forking thread right before the fork.
func shedBeforeTask(s *Spec) error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("clear dumpable: %w", err)
	}
	if s.Uid == 0 {
		// The fork's setgroups needs CAP_SETGID; its setgid and setuid
		// to what it already is need nothing.
		return setThreadCaps(forkCaps(s, unix.CAP_KILL, unix.CAP_SETGID), nil)
	}
	groups := make([]int, len(s.Groups))
	for k, g := range s.Groups {
		groups[k] = int(g)
	}
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(int(s.Gid), int(s.Gid), int(s.Gid)); err != nil {
		return fmt.Errorf("setresgid %d: %w", s.Gid, err)
	}
	// This thread keeps its permitted set across the uid change; the
	// others lose everything.
	if err := unix.Prctl(unix.PR_SET_KEEPCAPS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("keep capabilities: %w", err)
	}
	if err := syscall.Setresuid(int(s.Uid), int(s.Uid), int(s.Uid)); err != nil {
		return fmt.Errorf("setresuid %d: %w", s.Uid, err)
	}
	return setThreadCaps(forkCaps(s, s.Caps...), s.Caps)
}

// shedAfterTask runs once the task is forked.
func shedAfterTask(s *Spec) error {
	exemptFromOOM(s.oomScoreAdj)
	if s.Uid != 0 {
		return setThreadCaps(nil, nil)
	}
	hdr, data := capData([]uint{unix.CAP_KILL}, nil)
	_, _, e := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	if e == 0 {
		return nil
	}
	if !errors.Is(e, syscall.ENOTSUP) {
		return fmt.Errorf("keep only CAP_KILL: %w", e)
	}
	return setThreadCaps([]uint{unix.CAP_KILL}, nil)
}

// setThreadCaps makes this thread's permitted and effective sets caps
// and its inheritable set inh.
func setThreadCaps(caps, inh []uint) error {
	hdr, data := capData(caps, inh)
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

func capData(caps, inh []uint) (unix.CapUserHeader, [2]unix.CapUserData) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	for _, c := range caps {
		data[c/32].Permitted |= 1 << (c % 32)
		data[c/32].Effective |= 1 << (c % 32)
	}
	for _, c := range inh {
		data[c/32].Inheritable |= 1 << (c % 32)
	}
	return hdr, data
}
