//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// An agent whose client runs exec tasks and nothing else: raw_exec is off,
// as on a machine shared between teams.
const execOnlyMachine = `
server {
  enabled          = true
  bootstrap_expect = 1
}
client {
  enabled = true
}
`

// The agent's own secrets, which no task may see.
const agentSecret = "drover-e2e-agent-secret"

// isolatedJob is an exec task, as its default user, that reports what it
// can reach, leaves a setsid grandchild and a double-forked daemon behind
// and then sleeps under the marker.
func isolatedJob(m taskMarker, dataDir string) string {
	script := strings.Join([]string{
		`echo "uid=$(id -u)"`,
		`if cat /etc/shadow >/dev/null 2>&1; then echo shadow=readable; else echo shadow=denied; fi`,
		fmt.Sprintf(`if ls %s >/dev/null 2>&1; then echo datadir=visible; else echo datadir=hidden; fi`, dataDir),
		`echo "procs=$(ls -d /proc/[0-9]* | wc -l)"`,
		`echo "pid1=$(cat /proc/1/comm)"`,
		`echo "secret=${AWS_SESSION_TOKEN:-none}"`,
		`echo "template=$(cat $NOMAD_TASK_DIR/t.txt)"`,
		`echo "$(grep CapEff /proc/self/status | tr -d '\t')"`,
		fmt.Sprintf(`setsid bash -c 'exec -a %s-setsid sleep 3600' &`, m),
		fmt.Sprintf(`bash -c '(exec -a %s-daemon sleep 3600 &) &'`, m),
		`echo started`,
		fmt.Sprintf(`exec -a %s-main sleep 3600`, m),
	}, "\n")
	// The shell's own ${...} is not HCL's.
	script = strings.ReplaceAll(script, "${", "$${")
	return fmt.Sprintf(`
job "isolated" {
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/bash"
        args    = ["-c", %q]
      }
      template {
        data        = "token={{ env \"AWS_SESSION_TOKEN\" }}"
        destination = "local/t.txt"
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
`, script)
}

// An exec task runs as nobody inside its own root and process tree: it
// cannot read /etc/shadow or see the agent's data dir, sees only its own
// processes, holds no capabilities, and gets none of the agent's secrets,
// not even through a template. Stopping the job ends every process it
// started, a setsid grandchild and a double-forked daemon included.
func TestExecTaskIsConfinedAndLeavesNothingBehind(t *testing.T) {
	t.Setenv("AWS_SESSION_TOKEN", agentSecret)
	t.Setenv("DATABASE_PASSWORD", agentSecret)
	a := newAgent(t, agentSpec{name: "exec", extra: execOnlyMachine})
	a.waitOneReadyNode(t)
	m := newTaskMarker(t)
	registerJob(t, a, isolatedJob(m, a.dir), 30*time.Second)

	var alloc *api.Allocation
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(a, "isolated")
		if err != nil || len(allocs) != 1 {
			return false, fmt.Sprintf("allocs: %s (%v)", describeAllocs(allocs), err)
		}
		alloc = allocs[0]
		return alloc.ClientStatus == "running", describeAllocs(allocs)
	})
	var out string
	waitFor(t, 30*time.Second, func() (bool, string) {
		out = logOf(a, alloc.ID, "alloc/logs/t.stdout.0")
		return strings.Contains(out, "started"), "stdout so far: " + out
	})
	// The task's pid 1 is its init, the drover binary started again (its
	// comm, at most 15 bytes of the name), not a process of the host.
	comm := filepath.Base(binary(t))
	comm = comm[:min(len(comm), 15)]
	want := []string{"uid=65534", "shadow=denied", "datadir=hidden", "pid1=" + comm + "\n", "secret=none", "template=token=\n", "CapEff:0000000000000000"}
	for _, w := range want {
		if !strings.Contains(out+"\n", w) {
			t.Errorf("the task's report lacks %q:\n%s", w, out)
		}
	}
	var procs int
	if _, err := fmt.Sscanf(out[strings.Index(out, "procs="):], "procs=%d", &procs); err != nil || procs > 8 {
		t.Errorf("the task should see only its own few processes, saw %d (%v):\n%s", procs, err, out)
	}
	if strings.Contains(out, agentSecret) {
		t.Errorf("the agent's secret reached the task:\n%s", out)
	}
	waitFor(t, 10*time.Second, func() (bool, string) {
		got := m.procs()
		return len(got) == 3, fmt.Sprintf("task processes %v, want main, setsid and daemon", got)
	})

	if _, _, err := a.api().Jobs().Deregister("isolated", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		left := m.procs()
		return len(left) == 0, fmt.Sprintf("processes left after job stop: %v", left)
	})
}

// A child the task forks at once is held to the task's memory limit: there
// is no moment in which it runs outside the task's cgroup.
func TestExecTaskChildForkedAtOnceIsHeldToTheMemoryLimit(t *testing.T) {
	a := newAgent(t, agentSpec{name: "exec", extra: execOnlyMachine})
	a.waitOneReadyNode(t)
	job := execOnceJob("hog", `( v=$(head -c 209715200 /dev/zero | tr '\0' x); echo child-survived ) & wait; echo parent-done`)
	registerJob(t, a, job, 30*time.Second)
	alloc := waitAllocEnded(t, a, "hog")
	out := logOf(a, alloc.ID, "alloc/logs/t.stdout.0")
	if strings.Contains(out, "child-survived") || !strings.Contains(out, "parent-done") {
		t.Fatalf("the child should have been killed at the 32 MB limit and the parent gone on: %s\nstdout:\n%s", describeTaskEvents(alloc), out)
	}
}

// At its memory limit an exec task loses its largest process, not its
// whole tree. Its pid 1 is the init, the drover binary: once the task runs
// the init gives back the pages of the binary it touched to set the task
// up, and so is lighter than the 18 MB process the OOM killer must choose.
// (Holding them, ~22 MB, it was the heaviest, and its death took every
// process in the namespace with it.)
func TestAnOOMInAnExecTaskKillsItsLargestProcessNotItsInit(t *testing.T) {
	a := newAgent(t, agentSpec{name: "exec", extra: execOnlyMachine})
	a.waitOneReadyNode(t)
	// The first dd holds 18 MB (it reads its whole block before it
	// writes, then blocks on the pipe); only then does the second start,
	// and its 18 MB cross the 32 MB limit.
	job := execOnceJob("oom", "dd if=/dev/zero bs=18M count=1 2>/dev/null | { head -c1 >/dev/null; dd if=/dev/zero bs=18M count=1 2>/dev/null | sleep 2; }; echo main-went-on; grep VmRSS /proc/1/status")
	registerJob(t, a, job, 30*time.Second)
	alloc := waitAllocEnded(t, a, "oom")
	out := logOf(a, alloc.ID, "alloc/logs/t.stdout.0")
	if alloc.ClientStatus != "complete" || !strings.Contains(out, "main-went-on") {
		t.Errorf("the OOM kill took the task's main with it: %s\nstdout:\n%s", describeTaskEvents(alloc), out)
	}
	var kb int
	_, rss, _ := strings.Cut(out, "VmRSS:")
	if _, err := fmt.Sscanf(rss, "%d kB", &kb); err != nil || kb > 14<<10 {
		t.Errorf("the init, once the task runs, should hold under 14 MB; /proc/1/status says %q", out)
	}
}

// execOnceJob is a batch job of one exec task that runs script with
// /bin/sh under a 32 MB limit, once: no restart, no reschedule.
func execOnceJob(id, script string) string {
	return fmt.Sprintf(`
job %q {
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", %q]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, id, script)
}

// waitAllocEnded waits for the job's one alloc to end, complete or failed.
func waitAllocEnded(t *testing.T, a *agent, jobID string) *api.Allocation {
	t.Helper()
	var alloc *api.Allocation
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(a, jobID)
		if err != nil || len(allocs) != 1 {
			return false, fmt.Sprintf("allocs: %s (%v)", describeAllocs(allocs), err)
		}
		alloc = allocs[0]
		return alloc.ClientStatus == "complete" || alloc.ClientStatus == "failed", describeAllocs(allocs)
	})
	return alloc
}

// describeTaskEvents lists each task's state and events, for failure
// messages that must say how a task ended.
func describeTaskEvents(alloc *api.Allocation) string {
	var b strings.Builder
	fmt.Fprintf(&b, "alloc %s %s", alloc.ID[:8], alloc.ClientStatus)
	for name, ts := range alloc.TaskStates {
		fmt.Fprintf(&b, "\n  task %s %s failed=%v:", name, ts.State, ts.Failed)
		for _, e := range ts.Events {
			fmt.Fprintf(&b, " [%s: %s exit=%d signal=%d %v]", e.Type, e.DisplayMessage, e.ExitCode, e.Signal, e.Details)
		}
	}
	return b.String()
}

// A task that asks to run as root is refused where the node's
// user.denylist (default root) covers its driver (default exec): the
// placement failure names the user and the setting.
func TestExecTaskAsRootIsRefused(t *testing.T) {
	a := newAgent(t, agentSpec{name: "exec", extra: execOnlyMachine})
	a.waitOneReadyNode(t)
	job := `
job "root" {
  group "g" {
    task "t" {
      driver = "exec"
      user   = "root"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`
	registerJob(t, a, job, 30*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		evals, _, err := a.api().Jobs().Evaluations("root", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			for _, m := range e.FailedTGAllocs {
				s := fmt.Sprintf("%v %v", m.ConstraintFiltered, m.ClassFiltered)
				if strings.Contains(s, "root") && strings.Contains(s, "user.denylist") {
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("no placement failure naming root and user.denylist yet: %s", describeEvals(a, "root"))
	})
	allocs, err := jobAllocs(a, "root")
	if err != nil || len(allocs) != 0 {
		t.Fatalf("a root exec task must not be placed: %s (%v)", describeAllocs(allocs), err)
	}
}

// logOf reads a file of an alloc through the fs API, or says why it could
// not.
func logOf(a *agent, allocID, path string) string {
	out, err := catFile(a, allocID, path)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	return out
}
