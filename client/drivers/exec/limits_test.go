package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pids_limit bounds the task's processes (and threads): a shell forking
// sleepers without end is refused a fork at the limit (and dies of it).
func TestThePidsLimitBoundsTheTasksProcesses(t *testing.T) {
	needRoot(t)
	d := New(Options{Enabled: true, PidsLimit: 16})
	t.Cleanup(d.Shutdown)
	if d.Fingerprint().Attributes["cgroup.pids"] != "1" {
		t.Skip("no writable pids cgroup")
	}
	cfg, _, stderr := testTask(t, `while :; do sleep 100 & done`)
	start(t, d, cfg)
	res := waitExit(t, d, cfg.ID)
	refused, ok := readKeyed(filepath.Join("/sys/fs/cgroup/pids/drover", cgroupName(cfg)), "pids.events", "max")
	if !ok || refused == 0 {
		t.Errorf("no fork was refused at the limit (pids.events max = %d, %v); exit %+v", refused, ok, res)
	}
	if res.Successful() || !strings.Contains(stderr.String(), "fork") {
		t.Errorf("the fork loop ended with %+v, stderr %q; want a failed fork", res, stderr.String())
	}
}

// resources.cores become the task's cpuset.
func TestReservedCoresBecomeTheTasksCpuset(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	if d.Fingerprint().Attributes["cgroup.cpuset"] != "1" {
		t.Skip("no writable cpuset cgroup")
	}
	b, _ := os.ReadFile("/sys/fs/cgroup/cpuset/cpuset.cpus")
	if strings.TrimSpace(string(b)) == "0" {
		t.Skip("one CPU: nothing to confine to")
	}
	cfg, stdout, _ := testTask(t, `grep Cpus_allowed_list /proc/self/status`)
	cfg.Resources.Cores = []uint16{1}
	start(t, d, cfg)
	waitExit(t, d, cfg.ID)
	waitOutput(t, stdout, "Cpus_allowed_list")
	if !strings.Contains(stdout.String(), "Cpus_allowed_list:\t1\n") {
		t.Errorf("the task may run on %q, want core 1 only", stdout.String())
	}
}

// A program an artifact left in local/ as a plain file runs by its
// relative path, made executable, as in Nomad.
func TestARelativeCommandInTheTaskDirRuns(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, stderr := testTask(t, "")
	if err := os.WriteFile(filepath.Join(cfg.TaskDir, "local", "tool"), []byte("#!/bin/sh\necho tool-ran \"$@\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Config = map[string]any{"command": "local/tool", "args": []any{filepath.Join(cfg.TaskDir, "local", "conf")}}
	start(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v: %s", res, stderr.String())
	}
	waitOutput(t, stdout, "tool-ran")
	if !strings.Contains(stdout.String(), "tool-ran /local/conf") {
		t.Errorf("output %q: the argument naming the task dir was not rewritten", stdout.String())
	}
}
