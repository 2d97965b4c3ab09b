// Package childproc runs untrusted computations (a job file to evaluate, a
// task's templates to render) in a child process of the agent's own
// executable, under limits the agent's own process could not enforce on
// itself.
//
// # Why a process
//
// A Go computation cannot be cancelled from outside: a text/template
// ranging over a trillion numbers, or an HCL expression doubling a string,
// runs until it ends or the process dies, and its memory is the agent's.
// A child process can be killed at once and takes its memory with it, so
// the agent stays up whatever the input does.
//
// # How
//
// An entry point is registered by name (Register, normally from an init
// function), and the executable calls MaybeRun first thing in main: when
// the process was started as a child, MaybeRun runs the named entry and
// returns its exit code, and the program must exit with it instead of
// doing anything else. Test binaries that run children call MaybeRun from
// TestMain, so that the test binary can stand in for the executable.
//
// A Runner starts the child with the input on its stdin and reads the
// answer from its stdout. It enforces, and names in its errors, these
// limits:
//
//   - heap: the child watches its own Go heap and stops itself when it
//     passes the limit (the goroutine stacks are bounded by half of it),
//     and caps its data segment (rlimit.go) so that one allocation far
//     past the limit fails before it is written;
//   - wall time: the parent kills the child's process group at the
//     deadline, and the child exits by itself shortly after it, should
//     the parent be gone;
//   - CPU: the child runs with GOMAXPROCS=1;
//   - output: the parent keeps at most so many bytes of the answer;
//   - concurrency: at most so many children of one Runner run at once;
//     more calls wait for a slot (or for their context).
//
// The child's environment is exactly what the Runner is given, never the
// agent's own (which may hold tokens and paths). Cancelling the context of
// a call kills the child's process group at once.
//
// A child may report steps ("template 2") while it works; the error for a
// child stopped by a limit names the last one, so a caller can say which
// part of its input was at fault.
package childproc
