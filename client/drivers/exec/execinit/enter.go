package execinit

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/drover-sched/drover/helper/fdinherit"
)

// EnterMode, as EnvMarker's value, starts the enter mode: the process
// blocks reading fd 3 until the driver has placed it in the task's
// cgroups and closed the pipe, then execs its arguments (nsenter) in
// place, keeping its pid and so its cgroups, and the descriptors the
// driver passed from fd 4 on. What the pipe carries before its end is
// the environment nsenter gets (NUL-separated).
const EnterMode = "enter"

// EnterPassEnv holds, in the enter mode, how many descriptors from fd 4
// on the driver passed (the pinned namespaces and root): only those
// reach nsenter, whatever else the process inherited.
const EnterPassEnv = "DROVER_EXEC_ENTER_PASS"

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
	// namespaces and root (the count it names, from fd 4), nothing else.
	pass, err := strconv.Atoi(os.Getenv(EnterPassEnv))
	if err != nil || pass < 0 || 4+pass > maxScanFD {
		fmt.Fprintf(os.Stderr, "drover-exec-enter: %s=%q, want a count of descriptors\n", EnterPassEnv, os.Getenv(EnterPassEnv))
		return 2
	}
	fdinherit.CloseOnExecFrom(4 + pass)
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
