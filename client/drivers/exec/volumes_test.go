package exec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/drivers"
)

// hostVolumeDir is a host directory the task user (nobody) may write.
func hostVolumeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestExecTaskWritesIntoAHostVolume(t *testing.T) {
	needRoot(t)
	vol := hostVolumeDir(t)
	d := newDriver(t)
	cfg, _, stderr := testTask(t, `echo from-task > /srv/data/out && grep -E ' /srv/data ' /proc/self/mounts`)
	cfg.Mounts = []drivers.MountConfig{{TaskPath: "/srv/data", HostPath: vol, PropagationMode: "private"}}
	start(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v, stderr %q", res, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(vol, "out"))
	if err != nil || string(b) != "from-task\n" {
		t.Fatalf("the file is not on the host path: %q, %v", b, err)
	}
}

func TestExecReadOnlyHostVolumeRefusesWrites(t *testing.T) {
	needRoot(t)
	vol := hostVolumeDir(t)
	if err := os.WriteFile(filepath.Join(vol, "seed"), []byte("seed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := newDriver(t)
	// The task reads the volume, then tries to write it; the write must
	// fail with a read-only file system, and the mount must carry nosuid
	// and nodev.
	cfg, stdout, stderr := testTask(t, `cat /data/seed; if echo x > /data/new 2>/dev/null; then echo WROTE; fi; grep -E ' /data ' /proc/self/mounts`)
	cfg.Mounts = []drivers.MountConfig{{TaskPath: "/data", HostPath: vol, Readonly: true}}
	start(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v, stderr %q", res, stderr.String())
	}
	waitOutput(t, stdout, "/data")
	out := stdout.String()
	if strings.Contains(out, "WROTE") {
		t.Fatalf("a read-only volume took a write: %q", out)
	}
	if _, err := os.Stat(filepath.Join(vol, "new")); err == nil {
		t.Fatal("the file the task wrote is on the host")
	}
	line := out[strings.Index(out, " /data "):]
	for _, opt := range []string{"ro", "nosuid", "nodev"} {
		if !strings.Contains(line, opt+",") && !strings.Contains(line, ","+opt) {
			t.Fatalf("the mount lacks %s: %q", opt, line)
		}
	}
	if !strings.HasPrefix(out, "seed\n") {
		t.Fatalf("the task could not read the volume: %q", out)
	}
}

func TestExecRefusesPropagationItCannotGive(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, _, _ := testTask(t, `true`)
	cfg.Mounts = []drivers.MountConfig{{TaskPath: "/data", HostPath: t.TempDir(), PropagationMode: "bidirectional"}}
	_, err := d.StartTask(cfg)
	if err == nil || !strings.Contains(err.Error(), `propagation_mode "bidirectional" is not supported by exec`) {
		t.Fatalf("want a refusal naming the mode, got %v", err)
	}
}
