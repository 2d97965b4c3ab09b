package drivers

import (
	"fmt"
	"strings"
	"syscall"
)

var signals = map[string]syscall.Signal{
	"SIGABRT": syscall.SIGABRT, "SIGALRM": syscall.SIGALRM, "SIGHUP": syscall.SIGHUP,
	"SIGINT": syscall.SIGINT, "SIGKILL": syscall.SIGKILL, "SIGQUIT": syscall.SIGQUIT,
	"SIGTERM": syscall.SIGTERM, "SIGUSR1": syscall.SIGUSR1, "SIGUSR2": syscall.SIGUSR2,
	"SIGCONT": syscall.SIGCONT, "SIGSTOP": syscall.SIGSTOP, "SIGWINCH": syscall.SIGWINCH,
	"SIGURG": syscall.SIGURG, "SIGCHLD": syscall.SIGCHLD,
}

// ParseSignal turns "SIGTERM", "TERM" or "sigterm" into a signal; "" gives def.
func ParseSignal(name string, def syscall.Signal) (syscall.Signal, error) {
	if name == "" {
		return def, nil
	}
	n := strings.ToUpper(strings.TrimSpace(name))
	if !strings.HasPrefix(n, "SIG") {
		n = "SIG" + n
	}
	if s, ok := signals[n]; ok {
		return s, nil
	}
	return 0, fmt.Errorf("unknown signal %q (use a name such as SIGTERM)", name)
}
