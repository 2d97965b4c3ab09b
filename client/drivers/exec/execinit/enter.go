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
// place, keeping its pid and so its cgroups.
const EnterMode = "enter"

// ProbeMode, as EnvMarker's value, exits 0 at once: the driver's
// fingerprint starts it in new namespaces to learn that it can.
const ProbeMode = "probe"

func enter() int {
	sync := os.NewFile(3, "sync")
	_, _ = io.Copy(io.Discard, sync)
	sync.Close()
	// The command gets stdio and nothing else of ours.
	for fd := 3; fd < maxScanFD; fd++ {
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC)
		}
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "drover-exec-enter: nothing to run")
		return 2
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvMarker+"=") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], env)
	fmt.Fprintf(os.Stderr, "drover-exec-enter: exec %s: %v\n", os.Args[1], err)
	return 127
}
