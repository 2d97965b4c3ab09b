package childproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/testutil/wait"
)

// The test binary stands in for the executable: these entries are what
// its children run.
func TestMain(m *testing.M) {
	Register("echo", func(in []byte, _ func(string)) ([]byte, error) { return in, nil })
	Register("fail", func(in []byte, _ func(string)) ([]byte, error) { return nil, fmt.Errorf("it went wrong: %s", in) })
	Register("spin", func(_ []byte, step func(string)) ([]byte, error) {
		step("warming up")
		step("spinning")
		//lint:ignore SA5002 the child spins until a limit stops it
		for {
		}
	})
	Register("grow", func(_ []byte, step func(string)) ([]byte, error) {
		step("growing")
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	})
	Register("crash", func(_ []byte, step func(string)) ([]byte, error) {
		step("recursing")
		return nil, fmt.Errorf("%d", recurse(0))
	})
	Register("alloc", func(in []byte, step func(string)) ([]byte, error) {
		// One allocation of the size asked, written through, as a
		// template's indent makes its prefix.
		n, err := strconv.Atoi(string(in))
		if err != nil {
			return nil, err
		}
		step("allocating")
		return []byte(strings.Repeat("x", n)[:1]), nil
	})
	Register("big", func(in []byte, _ func(string)) ([]byte, error) {
		n, err := strconv.Atoi(string(in))
		return make([]byte, n), err
	})
	Register("env", func(_ []byte, _ func(string)) ([]byte, error) {
		return []byte(fmt.Sprintf("GOMAXPROCS=%d\n%s", runtime.GOMAXPROCS(0), strings.Join(os.Environ(), "\n"))), nil
	})
	Register("group", func(_ []byte, step func(string)) ([]byte, error) {
		// A process of the child's group that would outlive it unless
		// the group is killed.
		cmd := exec.Command("/bin/sleep", "1000")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		step(strconv.Itoa(cmd.Process.Pid))
		//lint:ignore SA5002 the child spins until it is killed
		for {
		}
	})
	if code, ok := MaybeRun(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

var sink [][]byte

// recurse overflows the stack, on purpose.
func recurse(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	//lint:ignore SA5007 the child must crash with a stack overflow
	return recurse(n+1) + int(pad[(n+1)%256])
}

func runner(entry string, l Limits) *Runner {
	if l.Heap == 0 {
		l.Heap = 64 << 20
	}
	if l.Wall == 0 {
		l.Wall = 20 * time.Second
	}
	if l.Output == 0 {
		l.Output = 1 << 20
	}
	return New(Config{Entry: entry, Limits: l, Concurrency: 2, Env: []string{"GIVEN=yes"}})
}

func TestAChildAnswersWithItsOutputOrItsError(t *testing.T) {
	out, err := runner("echo", Limits{}).Run(context.Background(), []byte("hello"))
	if err != nil || string(out) != "hello" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	out, err = runner("echo", Limits{}).Run(context.Background(), nil)
	if err != nil || len(out) != 0 {
		t.Fatalf("echo of nothing: %q, %v", out, err)
	}
	_, err = runner("fail", Limits{}).Run(context.Background(), []byte("badly"))
	var ce *ChildError
	if !errors.As(err, &ce) || ce.Msg != "it went wrong: badly" {
		t.Fatalf("fail: %v (%T)", err, err)
	}
}

func TestAChildSeesOnlyTheEnvironmentItIsGivenAndOneCore(t *testing.T) {
	t.Setenv("PARENT_SECRET", "s3cr3t")
	out, err := runner("env", Limits{}).Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	if !strings.Contains(got, "GIVEN=yes") || !strings.HasPrefix(got, "GOMAXPROCS=1\n") {
		t.Fatalf("child environment:\n%s", got)
	}
	for _, leaked := range []string{"PARENT_SECRET", "PATH=", "HOME="} {
		if strings.Contains(got, leaked) {
			t.Fatalf("the child saw the parent's %s:\n%s", leaked, got)
		}
	}
}

func TestAChildThatRunsTooLongIsStoppedAtTheDeadlineNamingItsLastStep(t *testing.T) {
	start := time.Now()
	_, err := runner("spin", Limits{Wall: 500 * time.Millisecond}).Run(context.Background(), nil)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitWall || le.Step != "spinning" {
		t.Fatalf("want a time limit error at step spinning, got %v (%T)", err, err)
	}
	if !strings.Contains(err.Error(), "ran longer than its 500ms time limit (at spinning)") {
		t.Fatalf("message %q", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("stopping it took %v", took)
	}
}

func TestAChildWhoseHeapGrowsPastTheLimitIsStopped(t *testing.T) {
	_, err := runner("grow", Limits{Heap: 32 << 20}).Run(context.Background(), nil)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitHeap || le.Step != "growing" {
		t.Fatalf("want a heap limit error, got %v (%T)", err, err)
	}
	if !strings.Contains(err.Error(), "needed more than its 32 MiB memory limit") {
		t.Fatalf("message %q", err)
	}
}

func TestAChildWhoseStackOverflowsEndsWithoutAnAnswerSayingWhy(t *testing.T) {
	_, err := runner("crash", Limits{Heap: 16 << 20}).Run(context.Background(), nil)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Step != "recursing" || !strings.Contains(ee.Stderr, "stack") {
		t.Fatalf("want an exit error naming the stack, got %v (%T)", err, err)
	}
}

func TestAnAnswerOverTheOutputLimitIsRefused(t *testing.T) {
	r := runner("big", Limits{Output: 1 << 20})
	if out, err := r.Run(context.Background(), []byte(strconv.Itoa(1<<20))); err != nil || len(out) != 1<<20 {
		t.Fatalf("an answer of exactly the limit: %d bytes, %v", len(out), err)
	}
	_, err := r.Run(context.Background(), []byte(strconv.Itoa(1<<20+1)))
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitOutput {
		t.Fatalf("want an output limit error, got %v (%T)", err, err)
	}
}

// Cancelling a call kills the child and everything it started at once;
// calls beyond the concurrency wait for a slot, and give up with their
// context without starting a child.
func TestCancellingKillsTheChildsGroupAndSlotsBoundConcurrency(t *testing.T) {
	r := New(Config{Entry: "group", Limits: Limits{Heap: 64 << 20, Wall: time.Minute, Output: 1 << 10}, Concurrency: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	steps := make(chan *lastLine, 1)
	go func() {
		// Run, but with the steps visible to the test.
		r.slots <- struct{}{}
		defer func() { <-r.slots }()
		exe, _ := r.executable()
		s := &lastLine{}
		steps <- s
		done <- r.start(ctx, exe, nil, &cappedBuffer{max: 1}, &cappedBuffer{max: 1}, s)
	}()
	s := <-steps
	pid := waitForStep(t, s)
	if n := Running(os.Getpid(), "group"); n != 1 {
		t.Fatalf("Running counts %d children of entry group, want 1", n)
	}

	waitCtx, waitCancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer waitCancel()
	if _, err := r.Run(waitCtx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call without a free slot: %v", err)
	}

	cancel()
	start := time.Now()
	<-done
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the child ended %v after its context", took)
	}
	// Polling another process's state: there is no event to wait on.
	if !wait.Holds(10*time.Second, func() bool { return !alive(pid) }) {
		t.Fatalf("process %d of the child's group outlived it", pid)
	}
	if n := Running(os.Getpid(), "group"); n != 0 {
		t.Fatalf("Running counts %d children of entry group after it ended, want 0", n)
	}
}

func waitForStep(t *testing.T, s *lastLine) int {
	t.Helper()
	// Polling: the step arrives through a pipe.
	var pid int
	if !wait.Holds(10*time.Second, func() bool {
		var err error
		pid, err = strconv.Atoi(s.last())
		return err == nil
	}, wait.Every(5*time.Millisecond)) {
		t.Fatal("the child reported no step")
	}
	return pid
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func TestRunningAnUnknownEntryIsAnExitError(t *testing.T) {
	_, err := runner("nonesuch", Limits{}).Run(context.Background(), nil)
	var ee *ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Stderr, `no child entry "nonesuch"`) {
		t.Fatalf("%v (%T)", err, err)
	}
}

// An executable that never calls MaybeRun would run itself again, whole,
// as the child (a test binary: all its tests): it is refused instead.
func TestAnExecutableThatDoesNotCallMaybeRunIsNotStarted(t *testing.T) {
	calledMaybeRun.Store(false)
	defer calledMaybeRun.Store(true)
	_, err := runner("echo", Limits{}).Run(context.Background(), []byte("hello"))
	var ee *ExitError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "does not call childproc.MaybeRun") {
		t.Fatalf("%v (%T)", err, err)
	}
}
