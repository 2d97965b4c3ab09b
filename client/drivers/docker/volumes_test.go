package docker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/mount"

	"github.com/drover-sched/drover/client/drivers"
)

// A docker task mounts its host volumes without volumes { enabled }: it
// writes into a writable one, which lands on the host path, and cannot
// write into a read-only one.
func TestDockerTaskMountsHostVolumes(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	rw, ro := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ro, "seed"), []byte("seed"), 0o644); err != nil {
		t.Fatal(err)
	}
	tt := newTestTask(t, cli, shell(`echo from-container > /data/out; cat /conf/seed; if echo x > /conf/new 2>/dev/null; then echo WROTE; fi; echo done`))
	tt.cfg.Mounts = []drivers.MountConfig{
		{TaskPath: "/data", HostPath: rw, PropagationMode: "private"},
		{TaskPath: "/conf", HostPath: ro, Readonly: true},
	}
	h := start(t, d, tt)
	if res := waitExit(t, d, tt.cfg.ID, 60*time.Second); !res.Successful() {
		t.Fatalf("exit %+v, stderr %q", res, tt.stderr.String())
	}
	tt.stdout.waitOutput(t, "done", func(s string) bool { return strings.Contains(s, "done") })
	if out := tt.stdout.String(); strings.Contains(out, "WROTE") || !strings.Contains(out, "seed") {
		t.Fatalf("read-only volume not enforced or not readable: %q", out)
	}
	b, err := os.ReadFile(filepath.Join(rw, "out"))
	if err != nil || string(b) != "from-container\n" {
		t.Fatalf("the container's file is not on the host path: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ro, "new")); err == nil {
		t.Fatal("a write reached the read-only volume's host path")
	}
	got := map[string]string{}
	for _, m := range inspect(t, cli, h).HostConfig.Mounts {
		if m.Type == mount.TypeBind && m.BindOptions != nil {
			got[m.Target] = string(m.BindOptions.Propagation)
		}
	}
	if got["/data"] != "rprivate" || got["/conf"] != "rprivate" {
		t.Fatalf("propagation: %v", got)
	}
}

// host-to-task and bidirectional need a shared host mount, which test
// hosts rarely have; their mapping is checked here, Nomad's.
func TestVolumeMountPropagationMapsToDockers(t *testing.T) {
	cfg := &drivers.TaskConfig{Mounts: []drivers.MountConfig{
		{TaskPath: "/a", HostPath: "/srv/a"},
		{TaskPath: "/b", HostPath: "/srv/b", PropagationMode: "host-to-task", Readonly: true},
		{TaskPath: "/c", HostPath: "/srv/c", PropagationMode: "bidirectional"},
	}}
	ms, err := volumeMounts(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []mount.Propagation{mount.PropagationRPrivate, mount.PropagationRSlave, mount.PropagationRShared}
	for i, m := range ms {
		if m.Type != mount.TypeBind || m.BindOptions.Propagation != want[i] || m.Source != cfg.Mounts[i].HostPath || m.ReadOnly != cfg.Mounts[i].Readonly {
			t.Fatalf("mount %d: %+v", i, m)
		}
	}
	cfg.Mounts[0].PropagationMode = "shared"
	if _, err := volumeMounts(cfg); err == nil || !strings.Contains(err.Error(), `propagation_mode "shared"`) {
		t.Fatalf("want a refusal, got %v", err)
	}
}
