package exec

import (
	"os"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
)

// The task sees only its own world: its processes (it is pid 2 under the
// init), no /etc/shadow, not the agent's directories, its own hostname,
// no capabilities as nobody, and its directories at the in-task paths.
func TestTheTaskSeesOnlyItsOwnWorld(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	marker, err := os.CreateTemp("", "drover-host-marker")
	if err != nil {
		t.Fatal(err)
	}
	marker.Close()
	t.Cleanup(func() { os.Remove(marker.Name()) })
	cfg, stdout, stderr := testTask(t, `
echo "uid=$(id -u)"
echo " procs=$(ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\n' ' ')"
echo "pid=$$"
if test -e /etc/shadow; then echo shadow=present; else echo shadow=absent; fi
if test -e /etc/passwd; then echo passwd=present; fi
echo "hostname=$(hostname)"
grep -E '^(Cap(Inh|Prm|Eff|Amb)|NoNewPrivs):' /proc/self/status
echo "taskdir=$NOMAD_TASK_DIR alloc=$NOMAD_ALLOC_DIR secrets=$NOMAD_SECRETS_DIR"
echo "cwd=$(pwd)"
if test -e `+marker.Name()+`; then echo sees-host-tmp; fi
if test -e `+"$HOSTDIR"+`; then echo sees-agent-dir; fi
test -e /proc/self/fd/3 && test -e /proc/self/fd/4 && echo log-holders=yes
echo hi > /local/written && echo local=writable
ls / | tr '\n' ' '; echo
`)
	// The alloc dir by its host path, where the agent's data dir holds it.
	cfg.Env["HOSTDIR"] = cfg.AllocDir
	start(t, d, cfg)
	res := waitExit(t, d, cfg.ID)
	out := stdout.String()
	t.Logf("stdout:\n%s\nstderr:\n%s", out, stderr.String())
	if !res.Successful() {
		t.Fatalf("exit %+v", res)
	}
	for _, leak := range []string{"sees-host-tmp", "sees-agent-dir"} {
		if strings.Contains(out, leak) {
			t.Errorf("the task %s", leak)
		}
	}
	// Pid 1 is the init; the rest are the shell and its pipeline (the
	// init's own threads took the pids in between).
	procs := strings.Fields(between(out, " procs=", "\n"))
	pid := between(out, "pid=", "\n")
	if len(procs) > 8 || !contains(procs, "1") || !contains(procs, pid) {
		t.Errorf("the task sees processes %v; want pid 1, its own (%s) and its pipeline only", procs, pid)
	}
	for _, want := range []string{
		"uid=65534", " procs=1 ", "shadow=absent", "passwd=present", "hostname=" + cfg.AllocID[:8],
		"CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
		"CapAmb:\t0000000000000000", "NoNewPrivs:\t1", "taskdir=/local alloc=/alloc secrets=/secrets", "cwd=/", "local=writable", "log-holders=yes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q", want)
		}
	}
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Task names that differ only in characters a cgroup name cannot hold
// still get groups of their own.
func TestEveryTaskOfAnAllocGetsItsOwnCgroup(t *testing.T) {
	long := strings.Repeat("x", 300)
	seen := map[string]string{}
	for _, name := range []string{"a b", "a:b", "a_b", "a_20b", "a/b", "a.b", "ä", long, long + "y"} {
		cfg := &drivers.TaskConfig{AllocID: "2f1c0a3e-0000-0000-0000-000000000001", TaskName: name}
		g := cgroupName(cfg)
		if other, ok := seen[g]; ok {
			t.Errorf("tasks %q and %q share cgroup %q", other, name, g)
		}
		seen[g] = name
		if len(g) > maxCgroupName {
			t.Errorf("task %q: cgroup name of %d bytes", name, len(g))
		}
		for _, c := range g {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
				t.Errorf("task %q: cgroup name %q holds %q", name, g, c)
			}
		}
	}
}
