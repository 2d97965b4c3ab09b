package fingerprint

import (
	"errors"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// fakeMachine is a machine with nothing of the host: files under a fake
// root, and fixed answers for the system calls.
func fakeMachine(t *testing.T, files map[string]string) machine {
	t.Helper()
	dir := t.TempDir()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var u unix.Utsname
	copy(u.Sysname[:], "Linux")
	copy(u.Release[:], "6.1.0-test")
	copy(u.Machine[:], "x86_64")
	_, eth0, _ := net.ParseCIDR("10.0.0.0/24")
	eth0.IP = net.IPv4(10, 0, 0, 5).To4()
	return machine{
		procRoot: filepath.Join(dir, "proc"), sysRoot: filepath.Join(dir, "sys"), etcRoot: filepath.Join(dir, "etc"),
		hostname: func() (string, error) { return "box1", nil },
		uname:    func() (unix.Utsname, error) { return u, nil },
		interfaces: func() ([]iface, error) {
			return []iface{{Name: "lo", Up: true, Loopback: true}, {Name: "eth0", Up: true, Addrs: []*net.IPNet{eth0}}}, nil
		},
		statfs: func(string) (DiskUsage, error) { return DiskUsage{TotalBytes: 100 << 30, FreeBytes: 40 << 30}, nil },
	}
}

func newNode() *Target {
	return &Target{Node: &structs.Node{NodeResources: &structs.NodeResources{}}, Attributes: map[string]string{}}
}

// The whole set over a fake machine produces exactly these attributes:
// nothing more, nothing less.
func TestFingerprintersDescribeAFakeMachineCompletely(t *testing.T) {
	m := fakeMachine(t, map[string]string{
		"proc/cpuinfo":   "processor\t: 0\nmodel name\t: Fake CPU\ncpu MHz\t\t: 2500.000\n\nprocessor\t: 1\ncpu MHz\t\t: 2500.000\n",
		"proc/meminfo":   "MemTotal:        4096000 kB\n",
		"etc/os-release": "ID=debian\nVERSION_ID=\"12\"\n",
	})
	cfg := &config.Config{DataDir: t.TempDir()}
	cfg.Canonicalize()
	n, err := m.fingerprint(cfg, map[string]*structs.DriverInfo{"raw_exec": {Detected: true, Healthy: true}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"unique.hostname": "box1", "nomad.version": config.DefaultVersion, "nomad.region": cfg.Region,
		"user.denylist": "root,Administrator", "user.checked_drivers": "exec,qemu,java",
		"os.name": "debian", "os.version": "12", "kernel.name": "linux", "kernel.version": "6.1.0-test", "kernel.arch": "x86_64",
		"cpu.arch": runtime.GOARCH, "cpu.numcores": "2", "cpu.totalcompute": "5000", "cpu.frequency": "2500", "cpu.modelname": "Fake CPU",
		"memory.totalbytes": "4194304000", "unique.storage.volume": cfg.DataDir,
		"unique.storage.bytestotal": "107374182400", "unique.storage.bytesfree": "42949672960",
		"unique.network.ip-address": "10.0.0.5", "driver.raw_exec": "1",
	}
	if got := n.Attributes.Map(); !maps.Equal(got, want) {
		t.Fatalf("attributes differ in %v\ngot  %v\nwant %v", attrDiff(want, got), got, want)
	}
	r := n.NodeResources
	if r.Cpu.CpuShares != 5000 || !slices.Equal(r.Cpu.ReservableCpuCores, []uint16{0, 1}) || r.Memory.MemoryMB != 4000 ||
		r.Disk.DiskMB != 40<<10 || len(r.Networks) != 1 || r.Networks[0].Device != "eth0" || r.Networks[0].CIDR != "10.0.0.5/24" {
		t.Fatalf("resources %+v", r)
	}
	if n.Name != "box1" {
		t.Fatalf("a node without node_name is named after its host, got %q", n.Name)
	}
}

func TestHostFingerprinterFallsBackToTheBuildOSWithoutOSRelease(t *testing.T) {
	m := fakeMachine(t, nil)
	n := newNode()
	if err := (hostFingerprinter{etcRoot: m.etcRoot, hostname: m.hostname, uname: m.uname}).Fingerprint(&config.Config{}, n); err != nil {
		t.Fatal(err)
	}
	if n.Attributes["os.name"] != runtime.GOOS || n.Attributes["os.version"] != "" || n.Attributes["kernel.name"] != "linux" {
		t.Fatalf("attributes %v", n.Attributes)
	}
}

func TestMemoryFingerprinterLeavesOutUnreadableMemory(t *testing.T) {
	for name, meminfo := range map[string]map[string]string{
		"no meminfo":    nil,
		"no MemTotal":   {"proc/meminfo": "MemFree: 1 kB\n"},
		"bad MemTotal":  {"proc/meminfo": "MemTotal: lots kB\n"},
		"empty meminfo": {"proc/meminfo": ""},
	} {
		t.Run(name, func(t *testing.T) {
			n := newNode()
			if err := (memoryFingerprinter{procRoot: fakeMachine(t, meminfo).procRoot}).Fingerprint(&config.Config{}, n); err != nil {
				t.Fatal(err)
			}
			if _, ok := n.Attributes["memory.totalbytes"]; ok || n.NodeResources.Memory.MemoryMB != 0 {
				t.Fatalf("memory described from %q: %v", name, n.Attributes)
			}
		})
	}
}

func TestStorageFingerprinterNeedsItsDataDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	m := fakeMachine(t, nil)
	err := (storageFingerprinter{statfs: m.statfs}).Fingerprint(&config.Config{DataDir: filepath.Join(file, "data")}, newNode())
	if err == nil {
		t.Fatal("a data dir that cannot be created must stop fingerprinting")
	}
	n := newNode()
	failing := storageFingerprinter{statfs: func(string) (DiskUsage, error) { return DiskUsage{}, errors.New("statfs failed") }}
	if err := failing.Fingerprint(&config.Config{DataDir: t.TempDir()}, n); err != nil || len(n.Attributes) != 0 {
		t.Fatalf("an unreadable filesystem is left out, got %v %v", err, n.Attributes)
	}
}

func TestNetworkFingerprinterNamesTheFailure(t *testing.T) {
	f := networkFingerprinter{interfaces: func() ([]iface, error) { return nil, errors.New("netlink down") }}
	err := f.Fingerprint(&config.Config{}, newNode())
	if err == nil || !strings.Contains(err.Error(), "list network interfaces: netlink down") {
		t.Fatalf("got %v", err)
	}
}
