package fingerprint

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// Fingerprinter describes one part of the machine: it adds the attributes
// and resources it found to the node being built. A part that cannot be
// read is left out; an error stops the client from starting, so it is
// kept for what the node cannot go without (its address, its data dir).
type Fingerprinter interface {
	Fingerprint(cfg *config.Config, node *Target) error
}

// Target is the node being built. Its attributes are a plain map while
// the fingerprinters fill it (a node's structs.Attributes is immutable);
// Fingerprint makes them the node's once every fingerprinter has run.
// Every other field is the node's own, through the embedded pointer.
type Target struct {
	*structs.Node
	Attributes map[string]string
}

// machine is where the fingerprinters read the host: the roots of /proc,
// /sys and /etc and the system calls they make. hostMachine is this
// host; tests build one over a fake root.
type machine struct {
	procRoot, sysRoot, etcRoot string
	hostname                   func() (string, error)
	uname                      func() (unix.Utsname, error)
	interfaces                 func() ([]iface, error)
	statfs                     func(path string) (DiskUsage, error)
}

// hostMachine is the machine the client runs on.
func hostMachine() machine {
	return machine{
		procRoot: "/proc", sysRoot: "/sys", etcRoot: "/etc",
		hostname:   os.Hostname,
		uname:      uname,
		interfaces: hostInterfaces,
		statfs:     Disk,
	}
}

// fingerprinters returns the fingerprinters that read m and describe
// drivers, in the order they run (a later one's failure leaves the
// earlier ones' work unused).
func (m machine) fingerprinters(drivers map[string]*structs.DriverInfo) []Fingerprinter {
	return []Fingerprinter{
		agentFingerprinter{},
		hostFingerprinter{etcRoot: m.etcRoot, hostname: m.hostname, uname: m.uname},
		cpuFingerprinter{procRoot: m.procRoot, sysRoot: m.sysRoot},
		memoryFingerprinter{procRoot: m.procRoot},
		storageFingerprinter{statfs: m.statfs},
		networkFingerprinter{interfaces: m.interfaces},
		hostNetworkFingerprinter{interfaces: m.interfaces},
		hostVolumeFingerprinter{stat: os.Stat},
		driversFingerprinter{drivers: drivers},
	}
}

// Fingerprint builds the node this client registers. drivers are the
// loaded drivers' fingerprints by name.
func Fingerprint(cfg *config.Config, drivers map[string]*structs.DriverInfo) (*structs.Node, error) {
	return hostMachine().fingerprint(cfg, drivers)
}

// fingerprint builds the node from the operator's settings, the node's
// persistent identity and what m's fingerprinters found.
func (m machine) fingerprint(cfg *config.Config, drivers map[string]*structs.DriverInfo) (*structs.Node, error) {
	id, secret, err := LoadIdentity(cfg.StateDir())
	if err != nil {
		return nil, err
	}
	httpAddr := cfg.AdvertiseHTTP
	if httpAddr == "" && cfg.BindAddr != "" {
		httpAddr = cfg.BindAddr
	}
	node := &structs.Node{
		ID: id, SecretID: secret, Datacenter: cfg.Datacenter, NodeClass: cfg.NodeClass,
		NodePool: cfg.NodePool, HTTPAddr: httpAddr, Meta: copyMap(cfg.Meta),
		NodeResources: &structs.NodeResources{MinDynamicPort: cfg.MinDynamicPort, MaxDynamicPort: cfg.MaxDynamicPort},
		Drivers:       drivers, Status: structs.NodeStatusReady,
		ReservedResources: &structs.NodeReservedResources{
			Cpu:      structs.NodeReservedCpuResources{CpuShares: cfg.Reserved.CPU},
			Memory:   structs.NodeReservedMemoryResources{MemoryMB: cfg.Reserved.MemoryMB},
			Disk:     structs.NodeReservedDiskResources{DiskMB: cfg.Reserved.DiskMB},
			Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: cfg.Reserved.ReservedPorts},
		},
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
	target := &Target{Node: node, Attributes: map[string]string{}}
	for _, f := range m.fingerprinters(drivers) {
		if err := f.Fingerprint(cfg, target); err != nil {
			return nil, err
		}
	}
	node.Attributes = structs.NewAttributes(target.Attributes)
	node.Name = cfg.NodeName
	if node.Name == "" {
		node.Name = target.Attributes["unique.hostname"]
	}
	node.Canonicalize()
	return node, nil
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
