package fingerprint

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// fixtureRoots returns this host with /proc, /sys and /etc replaced by
// a fake root holding the given files.
func fixtureRoots(t *testing.T, cpuinfo, meminfo, osrel string) machine {
	t.Helper()
	dir := t.TempDir()
	m := hostMachine()
	m.procRoot, m.sysRoot, m.etcRoot = filepath.Join(dir, "proc"), filepath.Join(dir, "sys"), filepath.Join(dir, "etc")
	for p, c := range map[string]string{"proc/cpuinfo": cpuinfo, "proc/meminfo": meminfo, "etc/os-release": osrel} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	return m
}

// operatorSettings are a client configuration with a class, meta and
// reservations, and three drivers: healthy, unhealthy with attributes,
// and not detected.
func operatorSettings(dataDir string) (*config.Config, map[string]*structs.DriverInfo) {
	cfg := &config.Config{DataDir: dataDir, NodeClass: "gpu", Meta: map[string]string{"rack": "r1"},
		Reserved: config.Reserved{CPU: 100, MemoryMB: 256, ReservedPorts: "22"}}
	cfg.Canonicalize()
	return cfg, map[string]*structs.DriverInfo{
		"raw_exec": {Detected: true, Healthy: true},
		"exec":     {Detected: true, Healthy: false, Attributes: map[string]string{"cgroup.memory": "1"}},
		"off":      {Detected: false},
	}
}

func TestFingerprintFromFixtures(t *testing.T) {
	m := fixtureRoots(t,
		"processor\t: 0\nmodel name\t: Test CPU\ncpu MHz\t\t: 2000.000\n\nprocessor\t: 1\ncpu MHz\t\t: 3000.000\n",
		"MemTotal:        2048000 kB\nMemFree: 1 kB\n",
		"NAME=\"Debian GNU/Linux\"\nID=debian\nVERSION_ID=\"12\"\n")
	cfg, drv := operatorSettings(t.TempDir())
	n, err := m.fingerprint(cfg, drv)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"cpu.numcores": "2", "cpu.totalcompute": "5000", "cpu.modelname": "Test CPU", "memory.totalbytes": "2097152000",
		"os.name": "debian", "os.version": "12", "kernel.name": "linux", "nomad.version": config.DefaultVersion,
		"driver.raw_exec": "1", "driver.exec.cgroup.memory": "1",
	}
	for k, v := range want {
		if got := n.Attributes.Value(k); got != v {
			t.Errorf("attr %s = %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"driver.exec", "driver.off", "unique.network.ip-address", "unique.hostname", "kernel.version"} {
		_, has := n.Attributes.Get(k)
		if want := k != "driver.exec" && k != "driver.off"; has != want {
			t.Errorf("attr %s present=%v", k, has)
		}
	}
	if n.NodeResources.Cpu.CpuShares != 5000 || n.NodeResources.Memory.MemoryMB != 2000 || n.NodeResources.MinDynamicPort != 20000 {
		t.Fatalf("resources %+v", n.NodeResources)
	}
	if n.ReservedResources.Cpu.CpuShares != 100 || n.ReservedResources.Networks.ReservedHostPorts != "22" || n.NodeClass != "gpu" || n.Meta["rack"] != "r1" {
		t.Fatalf("config not applied: %+v", n)
	}
	if err := n.Validate(); err != nil {
		t.Fatal(err)
	}
	// The identity is stable across fingerprints.
	n2, _ := m.fingerprint(cfg, drv)
	if n2.ID != n.ID || n2.SecretID != n.SecretID || n.ID == n.SecretID {
		t.Fatal("node identity must be generated once and persisted")
	}
}

func TestCPUFallbackWithoutFrequency(t *testing.T) {
	m := fixtureRoots(t, "processor\t: 0\nprocessor\t: 1\nprocessor\t: 2\n", "", "")
	ci := cpuFingerprinter{procRoot: m.procRoot, sysRoot: m.sysRoot}.read()
	if ci.Cores != 3 || ci.TotalMHz != 3*fallbackMHz || !ci.GuessedMHz {
		t.Fatalf("%+v", ci)
	}
}

func TestPickAddress(t *testing.T) {
	ipn := func(s string) *net.IPNet {
		_, n, _ := net.ParseCIDR(s)
		ip, _, _ := net.ParseCIDR(s)
		n.IP = ip
		return n
	}
	ifs := []iface{
		{Name: "lo", Up: true, Loopback: true, Addrs: []*net.IPNet{ipn("127.0.0.1/8")}},
		{Name: "down0", Up: false, Addrs: []*net.IPNet{ipn("10.9.9.9/24")}},
		{Name: "eth0", Up: true, Addrs: []*net.IPNet{ipn("fe80::1/64"), ipn("10.0.0.5/24")}},
		{Name: "eth1", Up: true, Addrs: []*net.IPNet{ipn("192.168.1.2/24")}},
	}
	cases := []struct {
		name, iface string
		loopback    bool
		dev, ip     string
	}{
		{"first up non-loopback IPv4", "", false, "eth0", "10.0.0.5"},
		{"named interface", "eth1", false, "eth1", "192.168.1.2"},
		{"loopback only", "", true, "lo", "127.0.0.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dev, ip, err := pickAddress(ifs, c.iface, c.loopback)
			if err != nil || dev != c.dev || ip.IP.String() != c.ip {
				t.Fatalf("got %s %v %v", dev, ip, err)
			}
		})
	}
	if dev, ip, _ := pickAddress(ifs[:2], "", false); dev != "lo" || ip.IP.String() != "127.0.0.1" {
		t.Fatalf("no usable interface should give loopback, got %s %v", dev, ip)
	}
	if _, _, err := pickAddress(ifs, "nope", false); err == nil {
		t.Fatal("an unknown interface must be an error")
	}
}
