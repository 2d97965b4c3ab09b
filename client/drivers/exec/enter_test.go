package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// preloadSource is a library whose constructor records the euid of every
// process that loads it.
const preloadSource = `#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void record(void) {
	char b[32];
	int n = snprintf(b, sizeof b, "euid=%d\n", (int)geteuid());
	int fd = open("/local/preload.log", O_WRONLY | O_CREAT | O_APPEND, 0666);
	if (fd >= 0) { write(fd, b, n); close(fd); }
}
`

// A job's LD_PRELOAD (or any loader variable) must reach the script
// check's command only: nsenter and setpriv run as root with every
// capability, and a library they loaded would run the job's code as root.
func TestAScriptChecksEnvironmentReachesOnlyTheDroppedCommand(t *testing.T) {
	needRoot(t)
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("needs a C compiler to build the preloaded library")
	}
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `echo ready; exec sleep 1000`)
	src := filepath.Join(t.TempDir(), "preload.c")
	if err := os.WriteFile(src, []byte(preloadSource), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(cfg.TaskDir, "local", "preload.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, src).CombinedOutput(); err != nil {
		t.Fatalf("build the library: %v\n%s", err, out)
	}
	h := start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	// Set after the start: the task itself never loaded it.
	cfg.Env["LD_PRELOAD"] = filepath.Join(cfg.TaskDir, "local", "preload.so")
	cfg.Env["SECRET_TOKEN"] = "s3cr3t-value"
	var out bytes.Buffer
	code, err := d.ExecTask(context.Background(), cfg.ID, "/bin/sh", []string{"-c", `echo "preload=$LD_PRELOAD token=$SECRET_TOKEN"`}, &out)
	if err != nil || code != 0 {
		t.Fatalf("ExecTask: code %d, err %v, output %q", code, err, out.String())
	}
	if !strings.Contains(out.String(), "preload=/local/preload.so token=s3cr3t-value") {
		t.Errorf("the command lacks the task's environment: %q", out.String())
	}
	// The environment never sits in an argv (readable by every host
	// user for as long as the check runs), nor in the enter process's
	// environment before it is confined.
	pid, st := handleParts(t, h)
	stateJSON, _ := json.Marshal(st)
	iso := newIsolation(Options{CgroupRoot: "/sys/fs/cgroup", ChrootEnv: DefaultChrootEnv, AllowCaps: DefaultAllowCaps, PidsLimit: DefaultPidsLimit})
	cmd, _, err := iso.ExecCommand(cfg, stateJSON, pid, "/bin/true", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cmd.ExtraFiles {
		defer f.Close()
	}
	if args := strings.Join(cmd.Args, " "); strings.Contains(args, "s3cr3t") || !strings.Contains(args, "LD_PRELOAD=/local/preload.so") {
		t.Errorf("argv %q: want LD_PRELOAD for env(1), never the secret", args)
	}
	if env := strings.Join(cmd.Env, " "); strings.Contains(env, "s3cr3t") || strings.Contains(env, "LD_PRELOAD") {
		t.Errorf("the enter process starts with %q", env)
	}
	b, _ := os.ReadFile(filepath.Join(cfg.TaskDir, "local", "preload.log"))
	log := string(b)
	if !strings.Contains(log, "euid=65534") {
		t.Errorf("the command did not load the job's library as the task user: %q", log)
	}
	if strings.Contains(log, "euid=0\n") {
		t.Errorf("the job's library ran as root before the privilege drop: %q", log)
	}
}

// A command run inside the task (a script check, alloc exec) gets the
// driver's descriptors of the task's namespaces and nothing else the
// agent holds, even one a careless parent of the agent left inheritable.
func TestACommandInTheTaskInheritsNoneOfTheAgentsDescriptors(t *testing.T) {
	needRoot(t)
	secret := filepath.Join(t.TempDir(), "agent-only")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Inheritable (F_DUPFD sets no close-on-exec), and right after the
	// driver's run (the sync pipe at 3, the five pinned namespaces and
	// root from 4) when that number is free.
	leak, err := unix.FcntlInt(f.Fd(), unix.F_DUPFD, 9)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(leak)
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `echo ready; exec sleep 1000`)
	start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	var out bytes.Buffer
	code, err := d.ExecTask(context.Background(), cfg.ID, "/bin/sh", []string{"-c", `for f in /proc/self/fd/*; do echo "$f $(readlink $f)"; done`}, &out)
	if err != nil || code != 0 {
		t.Fatalf("ExecTask: code %d, err %v, output %q", code, err, out.String())
	}
	if strings.Contains(out.String(), "agent-only") {
		t.Errorf("the command holds the agent's descriptor %d:\n%s", leak, out.String())
	}
}
