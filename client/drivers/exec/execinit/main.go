package execinit

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/drover-sched/drover/helper/fdinherit"
)

// memoryLimit is the init's Go soft memory limit once the task runs. Its
// memory is charged to the task's cgroup, so it should cost the task as
// little as possible; the init allocates almost nothing after the start.
const memoryLimit = 4 << 20

// called records that this process's main went through MaybeRun.
var called atomic.Bool

// Dispatches reports whether this process called MaybeRun, and so whether
// its executable, started again, would run an init rather than itself
// whole (a test binary without the TestMain would run its tests again).
func Dispatches() bool { return called.Load() }

// MaybeRun runs the init if this process was started as one (EnvMarker
// set) and returns its exit code; otherwise it returns false at once. The
// program's main, and the TestMain of packages that start exec tasks,
// call it before anything else.
func MaybeRun() (int, bool) {
	called.Store(true)
	switch os.Getenv(EnvMarker) {
	case "1":
		return run(), true
	case EnterMode:
		return enter(), true
	case ProbeMode:
		// Being started in the namespaces was the test.
		return 0, true
	}
	return 0, false
}

func run() int {
	// Capabilities and the bounding set are per thread: the cut made
	// before the task's fork must be on the thread that forks it.
	runtime.LockOSThread()
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(50)
	// Only what ForkExec hands the task (stdio, and the passed
	// descriptors renumbered from 3) may reach it: not the Go runtime's
	// own, not the init's pipes, not any a careless ancestor of the agent
	// left inheritable.
	fdinherit.CloseOnExec()
	status := os.NewFile(StatusFD, "status")
	fail := func(err error) int {
		_ = json.NewEncoder(status).Encode(Status{Error: err.Error()})
		return 1
	}
	specFile := os.NewFile(SpecFD, "spec")
	b, err := io.ReadAll(specFile)
	specFile.Close()
	if err != nil {
		return fail(fmt.Errorf("read the spec: %w", err))
	}
	if len(b) == 0 {
		// The driver gave up before it confined us.
		return 1
	}
	var spec Spec
	if err := json.Unmarshal(b, &spec); err != nil {
		return fail(fmt.Errorf("decode the spec: %w", err))
	}
	if spec.passFDs, err = passedFDs(spec.Pass); err != nil {
		return fail(err)
	}
	spec.oomScoreAdj = openOOMScoreAdj()
	// Joined on this, the locked thread, which forks the task: the
	// task is born in the alloc's network. Before the root is built,
	// while the host's path still names the namespace.
	if err := joinNetNS(spec.NetNS); err != nil {
		return fail(err)
	}
	if err := setupRoot(&spec); err != nil {
		return fail(err)
	}
	// Before the fork, so the task never meets a heavy pid 1.
	shrink()
	sup, err := start(&spec)
	if err != nil {
		return fail(err)
	}
	_ = json.NewEncoder(status).Encode(Status{Pid: sup.pid})
	// Only now: under the limit during the setup, the collector would
	// run at every allocation and make each start several times slower.
	debug.SetMemoryLimit(memoryLimit)
	runtime.GC()
	st := sup.run()
	_ = json.NewEncoder(status).Encode(st)
	return st.ExitCode
}
