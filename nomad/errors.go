package nomad

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
)

// ErrBadRequest marks an error caused by the caller's input; the HTTP layer
// maps it to 400. Its text says which field was wrong and why. It is
// structs.ErrBadRequest, the same value, which the FSM uses as well.
var ErrBadRequest = structs.ErrBadRequest

func errBadRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

// ErrTooLarge marks a request refused for its size (a job over
// job_max_source_size, a raft entry over the RPC message limit); the HTTP
// layer maps it to 413. Its text names the size, the limit and the setting.
var ErrTooLarge = structs.NewCodedError("TooLarge", "request too large")

// ErrAnswerTooLarge marks a read that cannot be answered because one
// object it would carry is larger than any RPC answer can be. Its text
// names the object and its size.
var ErrAnswerTooLarge = structs.NewCodedError("AnswerTooLarge", "answer too large")

func errTooLarge(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrTooLarge, fmt.Sprintf(format, args...))
}
