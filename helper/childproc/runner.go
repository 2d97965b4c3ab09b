package childproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Limits bound one child. All must be set.
type Limits struct {
	// Heap is how many bytes of Go heap the child may hold; its goroutine
	// stacks may hold half as much again.
	Heap uint64
	// Wall is how long the child may run, from its start.
	Wall time.Duration
	// Output is how many bytes of answer the parent accepts.
	Output int
}

// Config says what a Runner runs and how.
type Config struct {
	// Entry is the registered entry point the child runs.
	Entry  string
	Limits Limits
	// Concurrency is how many children run at once; more calls wait.
	Concurrency int
	// Env is the child's whole environment beyond what this package sets
	// (the entry, its limits, GOMAXPROCS=1): nothing of the parent's is
	// passed on unless it is here.
	Env []string
	// Exe is the executable to run; empty means this process's own.
	Exe string
}

// stderrKeep is how much of a child's stderr is kept for an ExitError.
const stderrKeep = 4 << 10

// exitWaitDelay bounds how long Wait waits for the child's pipes to close
// after it has exited (a process it started might hold them).
const exitWaitDelay = 2 * time.Second

// Runner runs children of one entry point. It is safe for concurrent use.
type Runner struct {
	cfg   Config
	slots chan struct{}
}

// New returns a Runner for cfg. A config without limits or concurrency is
// a programming error and panics.
func New(cfg Config) *Runner {
	if cfg.Entry == "" || cfg.Limits.Heap == 0 || cfg.Limits.Wall <= 0 || cfg.Limits.Output <= 0 || cfg.Concurrency <= 0 {
		panic(fmt.Sprintf("childproc: incomplete config %+v", cfg))
	}
	return &Runner{cfg: cfg, slots: make(chan struct{}, cfg.Concurrency)}
}

// Limits returns the limits each child runs under.
func (r *Runner) Limits() Limits { return r.cfg.Limits }

// Run runs one child with input and returns its answer. The error is a
// *LimitError when a limit stopped the child, a *ChildError when the
// entry returned one, an *ExitError when the child ended without an
// answer, and ctx's error when ctx ended first (the child is then killed
// at once). Waiting for a slot does not count towards the time limit.
func (r *Runner) Run(ctx context.Context, input []byte) ([]byte, error) {
	select {
	case r.slots <- struct{}{}:
		defer func() { <-r.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	exe, err := r.executable()
	if err != nil {
		return nil, &ExitError{Entry: r.cfg.Entry, Err: fmt.Errorf("finding the executable to run: %w", err)}
	}
	runCtx, cancel := context.WithTimeout(ctx, r.cfg.Limits.Wall)
	defer cancel()

	stdout := &cappedBuffer{max: r.cfg.Limits.Output + 1} // + the kind byte
	stderr := &cappedBuffer{max: stderrKeep}
	steps := &lastLine{}
	runErr := r.start(runCtx, exe, input, stdout, stderr, steps)

	switch {
	case errors.Is(runCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, r.limitError(LimitWall, steps)
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case stdout.overflow:
		return nil, r.limitError(LimitOutput, steps)
	case errors.Is(runErr, exec.ErrWaitDelay):
		// Something the child started held its stdout open after it
		// exited, and the answer may have been cut short.
		return nil, &ExitError{Entry: r.cfg.Entry, Err: runErr, Stderr: firstParagraph(stderr.String()), Step: steps.last()}
	}
	answer := stdout.Bytes()
	if len(answer) == 0 && strings.Contains(stderr.String(), "runtime: out of memory") {
		// An allocation past the child's data limit (see limitData).
		return nil, r.limitError(LimitHeap, steps)
	}
	if len(answer) == 0 {
		if runErr == nil {
			runErr = errors.New("exit status 0")
		}
		return nil, &ExitError{Entry: r.cfg.Entry, Err: runErr, Stderr: firstParagraph(stderr.String()), Step: steps.last()}
	}
	switch answer[0] {
	case answerOK:
		return answer[1:], nil
	case answerError:
		return nil, &ChildError{Msg: string(answer[1:])}
	case answerHeap:
		return nil, r.limitError(LimitHeap, steps)
	case answerWall:
		return nil, r.limitError(LimitWall, steps)
	}
	return nil, &ExitError{Entry: r.cfg.Entry, Err: fmt.Errorf("answer of unknown kind %q", answer[0]), Step: steps.last()}
}

// start runs the child to its end: in its own process group, which is
// killed as a whole when ctx ends, with steps read from a pipe of its own.
func (r *Runner) start(ctx context.Context, exe string, input []byte, stdout, stderr io.Writer, steps *lastLine) error {
	cmd := exec.CommandContext(ctx, exe)
	// What ps shows: which entry, rather than /proc/self/exe.
	cmd.Args = []string{argv0Prefix + r.cfg.Entry}
	cmd.Env = append([]string{
		envEntry + "=" + r.cfg.Entry,
		envHeap + "=" + strconv.FormatUint(r.cfg.Limits.Heap, 10),
		envWall + "=" + r.cfg.Limits.Wall.String(),
		envProgressFD + "=3", // the first of ExtraFiles
		"GOMAXPROCS=1",
		// Only a binary built with -race (a test binary) reads this: it
		// otherwise waits a second at exit for its report.
		"GORACE=atexit_sleep_ms=0",
	}, r.cfg.Env...)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The group, not only the child: whatever it started goes too. The
	// child is not yet reaped when Cancel runs, so its pid (the group's
	// id) cannot have been reused.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = exitWaitDelay

	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	defer pr.Close()
	cmd.ExtraFiles = []*os.File{pw}
	err = cmd.Start()
	pw.Close() // the child holds its own copy
	if err != nil {
		return err
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		_, _ = io.Copy(steps, pr)
	}()
	err = cmd.Wait()
	// The pipe reaches its end when the child's group is gone; a process
	// that escaped the group must not hold this call.
	select {
	case <-read:
	case <-time.After(exitWaitDelay):
		pr.Close()
		<-read
	}
	return err
}

func (r *Runner) limitError(l Limit, steps *lastLine) *LimitError {
	return &LimitError{Entry: r.cfg.Entry, Limit: l, Limits: r.cfg.Limits, Step: steps.last()}
}

// executable is what to run as the child: this very binary. On Linux that
// is /proc/self/exe, which still works after the file on disk has been
// replaced by an upgrade, so parent and child always agree.
func (r *Runner) executable() (string, error) {
	if r.cfg.Exe != "" {
		return r.cfg.Exe, nil
	}
	if !calledMaybeRun.Load() {
		return "", errors.New("this executable does not call childproc.MaybeRun first thing (in main, or in TestMain for a test binary), " +
			"so a child of it would not run its entry")
	}
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/exe"); err == nil {
			return "/proc/self/exe", nil
		}
	}
	return os.Executable()
}
