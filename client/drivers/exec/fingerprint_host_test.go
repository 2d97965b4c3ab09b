package exec

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostCgroups reads what this host offers from the kernel's own account,
// apart from the driver's detection: the v1 controllers mounted under
// /sys/fs/cgroup (by their mount options), or, where /sys/fs/cgroup is
// itself the v2 mount, the controllers its cgroup.controllers lists.
func hostCgroups(t *testing.T) (version int, ctrls map[string]bool) {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	ctrls = map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f, g := strings.Fields(pre), strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		mount, fstype := f[4], g[0]
		switch {
		case fstype == "cgroup2" && mount == "/sys/fs/cgroup":
			c, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers")
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range strings.Fields(string(c)) {
				ctrls[name] = true
			}
			return 2, ctrls
		case fstype == "cgroup" && filepath.Dir(mount) == "/sys/fs/cgroup":
			for _, opt := range strings.Split(g[2], ",") {
				ctrls[opt] = true
			}
			version = 1
		}
	}
	return version, ctrls
}

// The driver's attributes say what this host can do, as the kernel tells
// it: the cgroup version and each controller, and the namespaces a task
// gets. The scheduler and an operator read these (`node status
// -verbose`) to know where exec confines a task, so they must not claim
// what the host lacks, nor miss what it has.
func TestTheFingerprintSaysWhatTheHostOffers(t *testing.T) {
	needRoot(t)
	version, ctrls := hostCgroups(t)
	if version == 0 {
		t.Skip("no cgroup hierarchy mounted under /sys/fs/cgroup")
	}
	d := newDriver(t)
	fp := d.Fingerprint()
	attrs := fp.Attributes
	if got := attrs["cgroup.version"]; got != map[int]string{1: "1", 2: "2"}[version] {
		t.Errorf("cgroup.version = %q, the host's is v%d", got, version)
	}
	for _, c := range []string{"memory", "cpu", "pids", "cpuset", "freezer"} {
		want := boolAttr(ctrls[c])
		if version == 2 && c == "freezer" {
			want = "1" // v2 freezes through cgroup.freeze, with no controller
		}
		if got := attrs["cgroup."+c]; got != want {
			t.Errorf("cgroup.%s = %q, the host's says %q", c, got, want)
		}
	}
	var ns []string
	for _, n := range []string{"mnt", "pid", "ipc", "uts"} {
		if _, err := os.Stat("/proc/self/ns/" + n); err == nil {
			ns = append(ns, n)
		}
	}
	got := strings.Split(attrs["namespaces"], ",")
	if !fp.Healthy || !slices.Equal(got, ns) || attrs["chroot"] != "1" {
		t.Errorf("healthy %v (%s), namespaces %q, chroot %q; the host has %v", fp.Healthy, fp.HealthDescription, attrs["namespaces"], attrs["chroot"], ns)
	}
}
