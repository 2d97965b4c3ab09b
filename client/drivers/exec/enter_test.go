package exec

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	// Set after the start: the task itself never loaded it.
	cfg.Env["LD_PRELOAD"] = filepath.Join(cfg.TaskDir, "local", "preload.so")
	var out bytes.Buffer
	code, err := d.ExecTask(context.Background(), cfg.ID, "/bin/sh", []string{"-c", `echo "preload=$LD_PRELOAD"`}, &out)
	if err != nil || code != 0 {
		t.Fatalf("ExecTask: code %d, err %v, output %q", code, err, out.String())
	}
	if !strings.Contains(out.String(), "preload=/local/preload.so") {
		t.Errorf("the command lacks the task's environment: %q", out.String())
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
