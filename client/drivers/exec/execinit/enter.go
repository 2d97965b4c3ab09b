package execinit

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// EnterMode, as EnvMarker's value, starts the enter mode: the process
// blocks reading fd 3 until the driver has placed it in the task's
// cgroups and closed the pipe, then execs its arguments (nsenter) in
// place, keeping its pid and so its cgroups, and the descriptors the
// driver passed from fd 4 on. What the pipe carries before its end is
// the environment nsenter gets (NUL-separated).
const EnterMode = "enter"

// ProbeMode, as EnvMarker's value, exits 0 at once: the driver's
// fingerprint starts it in new namespaces to learn that it can.
const ProbeMode = "probe"

func enter() int {
	sync := os.NewFile(3, "sync")
	// The task's environment (NUL-separated), sent once the driver has
	// placed us in the task's cgroups; never in our argv, which the
	// host's users can read.
	b, err := io.ReadAll(sync)
	sync.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "drover-exec-enter: read the environment: %v\n", err)
		return 2
	}
	// nsenter gets stdio and the driver's descriptors of the task's
	// namespaces and root (the run from fd 4 os/exec left inheritable),
	// nothing else of ours.
	inRun := true
	for fd := 4; fd < maxScanFD; fd++ {
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			inRun = false
			continue
		}
		if inRun && flags&unix.FD_CLOEXEC == 0 {
			continue
		}
		inRun = false
		_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC)
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "drover-exec-enter: nothing to run")
		return 2
	}
	var env []string
	if len(b) > 0 {
		env = strings.Split(string(b), "\x00")
	}
	err = syscall.Exec(os.Args[1], os.Args[1:], env)
	fmt.Fprintf(os.Stderr, "drover-exec-enter: exec %s: %v\n", os.Args[1], err)
	return 127
}
