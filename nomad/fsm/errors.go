package fsm

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
)

// errBadRequest refuses an entry whose request the caller got wrong, with
// the server's bad-request sentinel (structs.ErrBadRequest), which the
// endpoint that proposed the entry answers as it answers its own checks.
func errBadRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", structs.ErrBadRequest, fmt.Sprintf(format, args...))
}

// nsOrDefault is the namespace an entry's object is stored under: an
// empty one is the default namespace, as the endpoints read it.
func nsOrDefault(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}
