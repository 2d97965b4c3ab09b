package exec

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// hardeningScript probes, as a root task holding mknod and dac_override,
// what must not work: opening a node it made (nodev) anywhere it can
// write, writing host sysctls (core_pattern is written back unchanged,
// so a failing run does no harm), reading masked /proc files.
const hardeningScript = `
for d in /local /tmp /secrets /alloc/data /dev; do
	mknod $d/n c 1 3 && { echo x > $d/n; } 2>/dev/null && echo "node-opens-in-$d"
	rm -f $d/n
done
v=$(cat /proc/sys/kernel/core_pattern)
{ printf '%s\n' "$v" > /proc/sys/kernel/core_pattern; } 2>/dev/null && echo "core_pattern-writable"
[ -s /proc/kcore ] && echo "kcore-visible"
head -c1 /proc/timer_list 2>/dev/null | grep -q . && echo "timer_list-visible"
awk '$5=="/" || $5=="/alloc" || $5=="/usr" || $5=="/proc/sys" || $5=="/proc/sysrq-trigger" {print "mount", $5, $6}' /proc/self/mountinfo
echo done
`

func TestWhatATaskCanWriteHoldsNoWorkingDeviceAndHostProcIsReadOnly(t *testing.T) {
	needRoot(t)
	d := newRootDriver(t)
	cfg, stdout, stderr := testTask(t, hardeningScript)
	cfg.User = "root"
	start(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v, stderr %q", res, stderr.String())
	}
	waitOutput(t, stdout, "done")
	out := stdout.String()
	for _, bad := range []string{"node-opens-in", "core_pattern-writable", "kcore-visible", "timer_list-visible"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s:\n%s", bad, out)
		}
	}
	mounts := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "mount" {
			mounts[f[1]] = f[2]
		}
	}
	for _, m := range []struct{ path, opts string }{
		{"/", "nosuid,nodev"}, {"/alloc", "nosuid,nodev"}, {"/usr", "ro,nosuid,nodev"},
		{"/proc/sys", "ro"}, {"/proc/sysrq-trigger", "ro"},
	} {
		if _, err := os.Stat(m.path); err != nil && strings.HasPrefix(m.path, "/proc/") {
			continue // this kernel has none
		}
		have := mounts[m.path]
		for _, o := range strings.Split(m.opts, ",") {
			if !strings.Contains(","+have+",", ","+o+",") {
				t.Errorf("mount %s: options %q lack %s", m.path, have, o)
			}
		}
	}
}

// A host directory mapped read-only brings its submounts, and they are
// read-only (and nodev, nosuid) too.
func TestSubmountsOfAMappedDirectoryAreReadOnlyToo(t *testing.T) {
	needRoot(t)
	src := t.TempDir()
	sub := filepath.Join(src, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", sub, "tmpfs", 0, "size=1m,mode=1777"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(sub, unix.MNT_DETACH) })
	env := maps.Clone(DefaultChrootEnv)
	env[src] = "/opt/extra"
	d := New(Options{Enabled: true, ChrootEnv: env, Users: rootAllowed})
	t.Cleanup(d.Shutdown)
	cfg, stdout, stderr := testTask(t, `{ echo x > /opt/extra/sub/f; } 2>/dev/null && echo "sub-writable"; awk '$5=="/opt/extra/sub" {print "mount", $6}' /proc/self/mountinfo; echo done`)
	cfg.User = "root"
	start(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("exit %+v, stderr %q", res, stderr.String())
	}
	waitOutput(t, stdout, "done")
	out := stdout.String()
	if strings.Contains(out, "sub-writable") {
		t.Errorf("a submount of a read-only mapping is writable:\n%s", out)
	}
	if !strings.Contains(out, "mount ro,nosuid,nodev") {
		t.Errorf("the submount's options are not ro,nosuid,nodev:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(sub, "f")); err == nil {
		t.Error("the task wrote into the host's submount")
	}
}

// On cgroup v1 the task may open only the few devices it is given.
func TestOnCgroupV1TheTaskGetsOnlyItsDevices(t *testing.T) {
	needRoot(t)
	d := newDriver(t)
	cfg, stdout, _ := testTask(t, `echo ready; exec sleep 1000`)
	list := filepath.Join("/sys/fs/cgroup/devices/drover", cgroupName(cfg), "devices.list")
	if _, err := os.Stat(filepath.Dir(filepath.Dir(list))); err != nil {
		t.Skip("no cgroup v1 devices hierarchy")
	}
	start(t, d, cfg)
	waitOutput(t, stdout, "ready")
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	have := strings.Fields(strings.ReplaceAll(string(b), "\n", ";"))
	got := strings.Join(have, " ")
	if strings.Contains(got, "a *:* rwm") {
		t.Fatalf("the task may open every device: %q", got)
	}
	for _, want := range allowedDevices {
		if !strings.Contains(string(b), want) {
			t.Errorf("devices.list lacks %q: %q", want, b)
		}
	}
}

// A non-root task may not cap_add mknod, setuid or setgid from the
// default allow_caps; a client that names them in allow_caps permits it.
func TestANonRootTaskCannotAddRootOnlyCapsByDefault(t *testing.T) {
	needRoot(t)
	for _, c := range rootOnlyCaps {
		d := newDriver(t)
		cfg, _, _ := testTask(t, "true")
		cfg.Config["cap_add"] = []any{c}
		if _, err := d.StartTask(cfg); err == nil {
			_ = d.DestroyTask(cfg.ID, true)
			t.Errorf("cap_add %s granted to nobody", c)
		} else if !strings.Contains(err.Error(), c) || !strings.Contains(err.Error(), "root tasks") {
			t.Errorf("cap_add %s: error %q does not say why", c, err)
		}
	}
	d := New(Options{Enabled: true, AllowCaps: []string{"mknod"}})
	t.Cleanup(d.Shutdown)
	cfg, _, stderr := testTask(t, "true")
	cfg.Config["cap_add"] = []any{"mknod"}
	start(t, d, cfg)
	if res := waitExit(t, d, cfg.ID); !res.Successful() {
		t.Fatalf("with allow_caps naming mknod: exit %+v, stderr %q", res, stderr.String())
	}
}
