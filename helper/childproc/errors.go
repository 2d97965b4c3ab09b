package childproc

import "fmt"

// Limit names the limit that stopped a child.
type Limit string

// The limits a Runner enforces (see Limits).
const (
	LimitHeap   Limit = "memory"
	LimitWall   Limit = "time"
	LimitOutput Limit = "output"
)

// LimitError is a child stopped by one of its limits. Step is the last
// step the child reported before it was stopped, "" if none.
type LimitError struct {
	Entry  string
	Limit  Limit
	Limits Limits
	Step   string
}

func (e *LimitError) Error() string {
	var what string
	switch e.Limit {
	case LimitHeap:
		what = fmt.Sprintf("it needed more than its %d MiB memory limit", e.Limits.Heap>>20)
	case LimitWall:
		what = fmt.Sprintf("it ran longer than its %s time limit", e.Limits.Wall)
	case LimitOutput:
		what = fmt.Sprintf("its answer was larger than its %d MiB output limit", e.Limits.Output>>20)
	}
	msg := fmt.Sprintf("child process %s was stopped: %s", e.Entry, what)
	if e.Step != "" {
		msg += " (at " + e.Step + ")"
	}
	return msg
}

// ChildError is the error the child's entry returned: the computation
// ran and failed (a bad job file, a template calling a function that
// does not exist). Msg is its text.
type ChildError struct {
	Msg string
}

func (e *ChildError) Error() string { return e.Msg }

// ExitError is a child that ended without an answer: it could not be
// started, crashed (a runtime fatal error such as a stack overflow), or
// was killed by something else. Stderr holds the start of what it wrote
// there; Step the last step it reported.
type ExitError struct {
	Entry  string
	Err    error
	Stderr string
	Step   string
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("child process %s ended without an answer (%v)", e.Entry, e.Err)
	if e.Step != "" {
		msg += " at " + e.Step
	}
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

func (e *ExitError) Unwrap() error { return e.Err }
