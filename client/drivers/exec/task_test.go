package exec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/internal/testutil"
)

// What a task holds: nothing as nobody, what cap_add asks (if allowed) as
// ambient capabilities, Nomad's default set as root, less cap_drop.
func TestCapabilitiesFollowTheUserCapAddAndCapDrop(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name   string
		user   string
		add    []any
		drop   []any
		capEff string
	}{
		{"nobody holds none", "", nil, nil, "0000000000000000"},
		{"nobody with cap_add net_bind_service holds it", "", []any{"net_bind_service"}, nil, "0000000000000400"},
		{"root holds the default allow_caps", "root", nil, nil, "00000000a80405fb"},
		{"root with cap_drop all holds none", "root", nil, []any{"all"}, "0000000000000000"},
		{"root with cap_drop kill lacks kill", "root", nil, []any{"CAP_KILL"}, "00000000a80405db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newRootDriver(t)
			cfg, stdout, stderr := testTask(t, `grep -E '^Cap(Eff|Bnd|Inh)' /proc/self/status`)
			cfg.User = tc.user
			if tc.add != nil {
				cfg.Config["cap_add"] = tc.add
			}
			if tc.drop != nil {
				cfg.Config["cap_drop"] = tc.drop
			}
			start(t, d, cfg)
			if res := waitExit(t, d, cfg.ID); !res.Successful() {
				t.Fatalf("exit %+v, stderr %q", res, stderr.String())
			}
			waitOutput(t, stdout, "CapEff")
			out := stdout.String()
			if !strings.Contains(out, "CapEff:\t"+tc.capEff) {
				t.Errorf("want CapEff %s, have:\n%s", tc.capEff, out)
			}
			// The bounding set never holds more than the task has.
			if !strings.Contains(out, "CapBnd:\t"+tc.capEff) {
				t.Errorf("want CapBnd %s, have:\n%s", tc.capEff, out)
			}
		})
	}
}

func TestCapAddOutsideAllowCapsIsRefused(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, _, _ := testTask(t, "true")
	cfg.Config["cap_add"] = []any{"sys_admin", "net_bind_service"}
	_, err := d.StartTask(cfg)
	if err == nil {
		_ = d.DestroyTask(cfg.ID, true)
		t.Fatal("sys_admin, outside allow_caps, was granted")
	}
	for _, want := range []string{`"cap_add"`, "sys_admin", "allow_caps permits", "net_bind_service"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	cfg.Config["cap_add"] = []any{"no_such_cap"}
	if _, err := d.StartTask(cfg); err == nil || !strings.Contains(err.Error(), "not a Linux capability") {
		t.Errorf("an unknown capability: %v", err)
	}
	if got := d.Fingerprint().Attributes["allow_caps"]; !strings.Contains(got, "net_bind_service") || strings.Contains(got, "sys_admin") {
		t.Errorf("fingerprint allow_caps = %q", got)
	}
}

// A start that fails inside the init, before the task's exec, is a
// StartTask error saying why, and leaves no process and no cgroup.
func TestFailuresBeforeTheExecAreStartErrors(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		name string
		edit func(*drivers.TaskConfig)
		want string
	}{
		{"a command missing from the chroot", func(c *drivers.TaskConfig) { c.Config["command"] = "no-such-command" }, "not found on PATH"},
		{"a host path outside the chroot", func(c *drivers.TaskConfig) { c.Config["command"] = "/root/tool" }, "inside the task's chroot"},
		{"an unknown user", func(c *drivers.TaskConfig) { c.User = "no-such-user" }, `task user "no-such-user"`},
		{"the host's pid namespace", func(c *drivers.TaskConfig) { c.Config["pid_mode"] = "host" }, `config "pid_mode": "host" is not offered`},
		{"the host's ipc namespace", func(c *drivers.TaskConfig) { c.Config["ipc_mode"] = "host" }, `config "ipc_mode": "host" is not offered`},
		{"a relative work_dir", func(c *drivers.TaskConfig) { c.Config["work_dir"] = "local" }, `config "work_dir": "local" is relative`},
		{"a missing work_dir", func(c *drivers.TaskConfig) { c.Config["work_dir"] = "/no/such/dir" }, `working directory "/no/such/dir" inside the task's chroot`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDriver(t)
			cfg, _, _ := testTask(t, "true")
			tc.edit(cfg)
			_, err := d.StartTask(cfg)
			if err == nil {
				_ = d.DestroyTask(cfg.ID, true)
				t.Fatal("the start succeeded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/memory/drover", cgroupName(cfg))); !os.IsNotExist(err) {
				t.Errorf("a failed start left its cgroup: %v", err)
			}
		})
	}
}

// work_dir is where the task starts, inside its chroot, named either
// way; pid_mode and ipc_mode "private" are what a task gets anyway.
func TestWorkDirIsTheTasksWorkingDirectory(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	for _, wd := range []string{"/local", "host"} {
		cfg, stdout, stderr := testTask(t, `echo "pwd=$(pwd)"; echo x > relative && echo wrote`)
		if wd == "host" {
			wd = filepath.Join(cfg.TaskDir, "local")
		}
		cfg.Config["work_dir"] = wd
		cfg.Config["pid_mode"], cfg.Config["ipc_mode"] = "private", ""
		start(t, d, cfg)
		if res := waitExit(t, d, cfg.ID); !res.Successful() {
			t.Fatalf("work_dir %s: exit %+v, stderr %q", wd, res, stderr.String())
		}
		waitOutput(t, stdout, "wrote")
		if !strings.Contains(stdout.String(), "pwd=/local\n") {
			t.Errorf("work_dir %s: %q", wd, stdout.String())
		}
		if _, err := os.Stat(filepath.Join(cfg.TaskDir, "local", "relative")); err != nil {
			t.Errorf("work_dir %s: a relative write did not land in local/: %v", wd, err)
		}
	}
}

func TestExitCodesAndSignalDeathsAreReported(t *testing.T) {
	needRoot(t)
	for _, tc := range []struct {
		script       string
		code, signal int
	}{
		{"exit 0", 0, 0},
		{"exit 3", 3, 0},
		{"kill -KILL $$", 137, 9},
		{"kill -TERM $$", 143, 15},
	} {
		t.Run(tc.script, func(t *testing.T) {
			d := newDriver(t)
			cfg, _, _ := testTask(t, tc.script)
			start(t, d, cfg)
			res := waitExit(t, d, cfg.ID)
			if res.ExitUnknown || res.ExitCode != tc.code || res.Signal != tc.signal {
				t.Errorf("exit %+v, want code %d signal %d", res, tc.code, tc.signal)
			}
		})
	}
}

// kill_signal goes to the init, which is pid 1 and so only receives
// signals it handles: it must pass it on for a trapping task to see it.
func TestTheKillSignalReachesATrappingTaskThroughTheInit(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `trap 'echo got-usr1; exit 7' USR1; echo ready; while :; do sleep 0.05; done`)
	start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	began := time.Now()
	if err := d.StopTask(cfg.ID, time.Minute, "SIGUSR1"); err != nil {
		t.Fatal(err)
	}
	res := waitExit(t, d, cfg.ID)
	if time.Since(began) > 30*time.Second {
		t.Fatal("the task only ended at the kill timeout")
	}
	waitOutput(t, stdout, "got-usr1")
	if res.ExitCode != 7 {
		t.Errorf("exit %+v, want the trap's 7", res)
	}
	// SignalTask reaches it the same way.
	cfg2, stdout2, _ := testTask(t, `trap 'echo got-hup' HUP; echo ready; while :; do sleep 0.05; done`)
	start(t, d, cfg2)
	waitOutput(t, stdout2, "ready")
	if err := d.SignalTask(cfg2.ID, "SIGHUP"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, stdout2, "got-hup")
}

// SIGURG and SIGCHLD, which the init cannot tell from its own, still
// reach a task that traps them, as kill_signal and through SignalTask.
func TestUrgAndChldReachATrappingTask(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `trap 'echo got-urg; exit 7' URG; echo ready; while :; do sleep 0.05; done`)
	start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	began := time.Now()
	if err := d.StopTask(cfg.ID, time.Minute, "SIGURG"); err != nil {
		t.Fatal(err)
	}
	res := waitExit(t, d, cfg.ID)
	if time.Since(began) > 30*time.Second {
		t.Fatal("the task only ended at the kill timeout")
	}
	waitOutput(t, stdout, "got-urg")
	if res.ExitCode != 7 {
		t.Errorf("exit %+v, want the trap's 7", res)
	}
	cfg2, stdout2, _ := testTask(t, `trap 'echo got-chld' CHLD; echo ready; while :; do read -t 1 x </dev/zero || :; done`)
	start(t, d, cfg2)
	waitOutput(t, stdout2, "ready")
	if err := d.SignalTask(cfg2.ID, "SIGCHLD"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, stdout2, "got-chld")
}

// A client restart (a new Driver) re-attaches from the handle and its stop
// still kills the whole task, setsid children included.
func TestStopAfterReattachKillsEverything(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `setsid sleep 1000 & sleep 1001 & echo started; wait`)
	h := start(t, d, cfg)
	waitOutput(t, stdout, "started")
	st, _ := d.InspectTask(cfg.ID)
	ns := pidNS(st.Pid)
	testutil.WaitFor(t, "the task's processes", func() bool { return len(inNamespace(ns)) >= 4 })
	d.Shutdown()

	d2 := newDriver(t)
	if err := d2.RecoverTask(h); err != nil {
		t.Fatal(err)
	}
	if err := d2.StopTask(cfg.ID, 100*time.Millisecond, ""); err != nil {
		t.Fatal(err)
	}
	if res := waitExit(t, d2, cfg.ID); !res.ExitUnknown {
		t.Logf("re-attached exit: %+v", res)
	}
	if err := d2.DestroyTask(cfg.ID, true); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "every process of the task to be gone", func() bool { return len(inNamespace(ns)) == 0 })
}

// A script check runs where the task runs: same root,
// namespaces, cgroups, user and (no) capabilities.
func TestExecTaskRunsInsideTheTask(t *testing.T) {
	needRoot(t)
	// A descriptor left inheritable, as an agent's careless parent would:
	// the init must not take it for one of the driver's (it lands right
	// after them, at 7, when that is free).
	leak, err := unix.FcntlInt(0, unix.F_DUPFD, 7)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(leak) })
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `echo ready; exec sleep 1000`)
	start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	var out bytes.Buffer
	script := `id -u; hostname; test -e /etc/shadow || echo noshadow; grep memory /proc/self/cgroup; grep CapEff /proc/self/status; ls /proc | grep -cE '^[0-9]+$'; echo "dir=$NOMAD_TASK_DIR"; exit 4`
	code, err := d.ExecTask(context.Background(), cfg.ID, "/bin/sh", []string{"-c", script}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if code != 4 {
		t.Errorf("exit code %d, want 4; output %q", code, out.String())
	}
	for _, want := range []string{"65534\n", cfg.AllocID[:8] + "\n", "noshadow", "/drover/" + cgroupName(cfg), "CapEff:\t0000000000000000", "dir=/local"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("ExecTask output lacks %q:\n%s", want, out.String())
		}
	}
}

// Usage comes from the task's cgroups, and the init's own cost is small.
func TestStatsComeFromTheCgroupAndTheInitIsSmall(t *testing.T) {
	needRoot(t)
	// A descriptor left inheritable, as an agent's careless parent would:
	// the init must not take it for one of the driver's (it lands right
	// after them, at 7, when that is free).
	leak, err := unix.FcntlInt(0, unix.F_DUPFD, 7)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(leak) })
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `echo ready; exec sleep 1000`)
	start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	u, err := d.TaskStats(cfg.ID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Pids != 2 || u.MemoryRSS == 0 {
		t.Errorf("stats %+v, want 2 pids (init, sleep) and some memory", u)
	}
	st, _ := d.InspectTask(cfg.ID)
	// The task holds stdio and the two log holders, nothing of the
	// init's own (its pipes, the Go runtime's epoll).
	kids := children(st.Pid)
	testutil.WaitFor(t, "the shell to exec sleep", func() bool {
		comm, _ := os.ReadFile("/proc/" + strings.Join(kids, "") + "/comm")
		return string(comm) == "sleep\n"
	})
	if len(kids) != 1 {
		t.Errorf("the init has children %q, want the task alone", kids)
	} else {
		fds, _ := os.ReadDir("/proc/" + kids[0] + "/fd")
		var names []string
		for _, f := range fds {
			names = append(names, f.Name())
		}
		// dash keeps a copy of stdin at 10; nothing else is allowed.
		names = slices.DeleteFunc(names, func(n string) bool { return n == "10" })
		slices.Sort(names)
		if strings.Join(names, " ") != "0 1 2 3 4" {
			t.Errorf("the task holds descriptors %v, want 0-4", names)
		}
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(st.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	// Anonymous memory is what the init costs the task's cgroup; its
	// file pages are the executable's, shared with the agent.
	for _, line := range strings.Split(string(b), "\n") {
		for _, key := range []string{"VmRSS:", "RssAnon:", "RssFile:"} {
			if v, ok := strings.CutPrefix(line, key); ok {
				kb, _ := strconv.Atoi(strings.Fields(v)[0])
				t.Logf("init %s %d kB", key, kb)
				if key == "RssAnon:" && kb > 8<<10 && !raceEnabled {
					t.Errorf("the init's anonymous memory is %d kB", kb)
				}
			}
		}
	}
}

// children lists pid's children, whichever of its threads forked them.
func children(pid int) []string {
	var out []string
	threads, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, th := range threads {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + th.Name() + "/children")
		out = append(out, strings.Fields(string(b))...)
	}
	return out
}

// SIGSTOP cannot be forwarded by the init (it stops the init itself), so
// it and the SIGCONT after it reach every process of the task directly.
func TestStopAndContinueReachEveryProcessOfTheTask(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `setsid sleep 1000 & sleep 1001 & echo started; wait`)
	start(t, d, cfg)
	waitOutput(t, stdout, "started")
	st, _ := d.InspectTask(cfg.ID)
	ns := pidNS(st.Pid)
	testutil.WaitFor(t, "the task's processes", func() bool { return len(inNamespace(ns)) >= 4 })
	states := func() string {
		var out []string
		for _, pid := range inNamespace(ns) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
			_, rest, _ := strings.Cut(string(b), ") ")
			out = append(out, rest[:1])
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), "")
	}
	if err := d.SignalTask(cfg.ID, "SIGSTOP"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "every process to stop", func() bool { return states() == "T" })
	if err := d.SignalTask(cfg.ID, "SIGCONT"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "every process to run again", func() bool { return !strings.Contains(states(), "T") })
}

// A restart runs the next attempt in the same task dir, over the mount
// points the first left there; a link a task planted where a mount goes
// is refused rather than followed.
func TestARestartReusesTheTaskDirButNotALinkPlantedInIt(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, stderr := testTask(t, `echo attempt`)
	for attempt := range 2 {
		next := *cfg
		next.ID = cfg.ID + "-" + strconv.Itoa(attempt)
		start(t, d, &next)
		if res := waitExit(t, d, next.ID); !res.Successful() {
			t.Fatalf("attempt %d: exit %+v: %s", attempt, res, stderr.String())
		}
		if err := d.DestroyTask(next.ID, true); err != nil {
			t.Fatal(err)
		}
	}
	waitOutput(t, stdout, "attempt\nattempt\n")
	if err := os.RemoveAll(filepath.Join(cfg.TaskDir, "usr")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(cfg.TaskDir, "usr")); err != nil {
		t.Fatal(err)
	}
	cfg.ID += "-planted"
	_, err := d.StartTask(cfg)
	if err == nil {
		_ = d.DestroyTask(cfg.ID, true)
		t.Fatal("a task dir with usr -> / started")
	}
	if !strings.Contains(err.Error(), "/usr in the task dir is a symbolic link") {
		t.Errorf("error %q", err)
	}
}

// Tasks started at once each get their own init, namespaces and cgroups.
func TestTasksStartedAtOnceAreEachTheirOwn(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	const n = 6
	type task struct {
		cfg    *drivers.TaskConfig
		stdout *output
	}
	tasks := make([]task, n)
	for k := range tasks {
		cfg, stdout, _ := testTask(t, `echo "host=$(hostname) procs=$(ls /proc | grep -cE '^[0-9]+$')"`)
		tasks[k] = task{cfg, stdout}
	}
	errs := make(chan error, n)
	for _, tk := range tasks {
		go func() {
			_, err := d.StartTask(tk.cfg)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, tk := range tasks {
		t.Cleanup(func() { _ = d.DestroyTask(tk.cfg.ID, true) })
		if res := waitExit(t, d, tk.cfg.ID); !res.Successful() {
			t.Errorf("exit %+v", res)
		}
		waitOutput(t, tk.stdout, "host="+tk.cfg.AllocID[:8]+" ")
	}
}
