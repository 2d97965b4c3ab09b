package childproc

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The environment a Runner gives its child: which entry to run and the
// limits the child enforces on itself.
const (
	envEntry      = "DROVER_CHILD"
	envHeap       = "DROVER_CHILD_HEAP"
	envWall       = "DROVER_CHILD_WALL"
	envProgressFD = "DROVER_CHILD_PROGRESS_FD"
)

// The first byte of a child's answer says what follows.
const (
	answerOK    byte = 'o' // the entry's output
	answerError byte = 'e' // the entry's error text
	answerHeap  byte = 'h' // stopped by its heap watchdog; nothing follows
	answerWall  byte = 'w' // stopped by its own deadline; nothing follows
)

// Exit codes of a child.
const (
	exitAnswered = 0 // an answer of any kind was written
	exitUsage    = 2 // started wrongly: no answer
	exitLimit    = 3 // stopped by a limit after answering so
)

// ownDeadlineGrace is how long after the parent's deadline a child ends
// itself. The parent normally kills it at the deadline; this only matters
// when the parent is gone (killed, crashed), so an orphan cannot spin on.
const ownDeadlineGrace = 2 * time.Second

// maxStepLen bounds one reported step, so one write stays atomic on a pipe.
const maxStepLen = 200

// Entry is a child's work: it gets the input the parent sent and returns
// the answer, or an error whose text the parent receives as a
// *ChildError. step reports what the entry is doing now, for the
// parent's error should a limit stop it.
type Entry func(input []byte, step func(string)) ([]byte, error)

var (
	registryMu sync.Mutex
	registry   = map[string]Entry{}
)

// calledMaybeRun records that this executable calls MaybeRun first thing,
// so that its children run their entry. A Runner refuses to start its own
// executable otherwise: such a child (a test binary whose TestMain lacks
// the call, most likely) would run the whole program again instead.
var calledMaybeRun atomic.Bool

// Register makes e the child entry point called name. It is meant for init
// functions; registering a name twice is a programming error and panics.
func Register(name string, e Entry) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic("childproc: entry " + name + " registered twice")
	}
	registry[name] = e
}

func lookup(name string) Entry {
	registryMu.Lock()
	defer registryMu.Unlock()
	return registry[name]
}

// MaybeRun runs the child entry this process was started for and returns
// its exit code, or returns false if the process is no child. The
// program's main, and the TestMain of packages whose tests run children,
// call it before anything else and exit with the code when it returns
// true.
func MaybeRun() (int, bool) {
	calledMaybeRun.Store(true)
	name, ok := os.LookupEnv(envEntry)
	if !ok {
		return 0, false
	}
	heap, err := strconv.ParseUint(os.Getenv(envHeap), 10, 64)
	if err != nil || heap == 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a heap limit in bytes\n", envHeap, os.Getenv(envHeap))
		return exitUsage, true
	}
	wall, err := time.ParseDuration(os.Getenv(envWall))
	if err != nil || wall <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q is not a duration\n", envWall, os.Getenv(envWall))
		return exitUsage, true
	}
	var progress io.Writer = io.Discard
	if v := os.Getenv(envProgressFD); v != "" {
		if fd, err := strconv.Atoi(v); err == nil && fd > 2 {
			progress = os.NewFile(uintptr(fd), "progress")
		}
	}
	return runChild(name, heap, wall, os.Stdin, os.Stdout, progress), true
}

// runChild runs entry name on what in holds and writes the answer to out.
// Two watchdogs end the process with an answer: one when the heap passes
// heap, one at the wall limit plus a grace (the parent's own deadline
// comes first).
func runChild(name string, heap uint64, wall time.Duration, in io.Reader, out, progress io.Writer) int {
	entry := lookup(name)
	if entry == nil {
		fmt.Fprintf(os.Stderr, "no child entry %q in this executable\n", name)
		return exitUsage
	}
	// The garbage collector works hard to stay well below the limit, so
	// only a computation that really holds that much is stopped.
	debug.SetMemoryLimit(int64(heap / 2))
	debug.SetMaxStack(int(min(heap/2, 1<<30)))
	if err := limitData(heap); err != nil {
		fmt.Fprintf(os.Stderr, "capping the child's memory: %v\n", err)
		return exitUsage
	}

	var outMu sync.Mutex
	answer := func(kind byte, payload []byte) {
		outMu.Lock() // held until exit: one answer only
		if _, err := out.Write([]byte{kind}); err == nil && len(payload) > 0 {
			_, _ = out.Write(payload)
		}
	}
	stop := func(kind byte) {
		answer(kind, nil)
		os.Exit(exitLimit)
	}
	go watchHeap(heap, func() { stop(answerHeap) })
	time.AfterFunc(wall+ownDeadlineGrace, func() { stop(answerWall) })

	input, err := io.ReadAll(in)
	if err != nil {
		answer(answerError, []byte("reading the child's input: "+err.Error()))
		return exitAnswered
	}
	output, err := entry(input, func(s string) {
		s = strings.ReplaceAll(s, "\n", " ")
		if len(s) > maxStepLen {
			s = s[:maxStepLen]
		}
		_, _ = io.WriteString(progress, s+"\n")
	})
	if err != nil {
		answer(answerError, []byte(err.Error()))
		return exitAnswered
	}
	answer(answerOK, output)
	return exitAnswered
}

// watchHeap calls over once the heap passes limit. It samples every few
// milliseconds (async preemption lets it run beside a computation that
// never yields, even on one core); at the rates a template or an
// evaluator allocates, the heap overshoots the limit by little more than
// its largest single allocation before it is stopped.
func watchHeap(limit uint64, over func()) {
	var m runtime.MemStats
	for {
		runtime.ReadMemStats(&m)
		if m.HeapAlloc > limit {
			over()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}
