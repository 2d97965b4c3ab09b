package fingerprint

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// Fingerprint builds the node this client registers. drivers are the
// loaded drivers' fingerprints by name.
func Fingerprint(cfg *config.Config, drivers map[string]*structs.DriverInfo) (*structs.Node, error) {
	id, secret, err := LoadIdentity(cfg.StateDir())
	if err != nil {
		return nil, err
	}
	attrs := map[string]string{}
	hostname, _ := os.Hostname()
	name := cfg.NodeName
	if name == "" {
		name = hostname
	}
	attrs["unique.hostname"] = hostname
	attrs["nomad.version"] = cfg.Version
	attrs["nomad.region"] = cfg.Region
	attrs["os.name"], attrs["os.version"] = osRelease()
	var arch string
	attrs["kernel.name"], attrs["kernel.version"], arch = kernel()
	attrs["kernel.arch"] = arch
	attrs["cpu.arch"] = runtime.GOARCH

	res := &structs.NodeResources{MinDynamicPort: cfg.MinDynamicPort, MaxDynamicPort: cfg.MaxDynamicPort}

	ci := fingerprintCPU()
	if cfg.CPUTotalCompute > 0 {
		ci.TotalMHz = cfg.CPUTotalCompute
	}
	attrs["cpu.numcores"] = strconv.Itoa(ci.Cores)
	attrs["cpu.totalcompute"] = strconv.FormatInt(ci.TotalMHz, 10)
	attrs["cpu.frequency"] = strconv.Itoa(int(ci.MHz))
	if ci.Model != "" {
		attrs["cpu.modelname"] = ci.Model
	}
	res.Cpu = structs.NodeCpuResources{CpuShares: ci.TotalMHz, TotalCpuCores: uint16(ci.Cores)}
	for i := 0; i < ci.Cores; i++ {
		res.Cpu.ReservableCpuCores = append(res.Cpu.ReservableCpuCores, uint16(i))
	}

	if mem, err := fingerprintMemory(); err == nil {
		attrs["memory.totalbytes"] = strconv.FormatUint(mem, 10)
		res.Memory.MemoryMB = int64(mem >> 20)
	}

	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, err
	}
	if du, err := Disk(cfg.DataDir); err == nil {
		attrs["unique.storage.volume"] = cfg.DataDir
		attrs["unique.storage.bytestotal"] = strconv.FormatUint(du.TotalBytes, 10)
		attrs["unique.storage.bytesfree"] = strconv.FormatUint(du.FreeBytes, 10)
		res.Disk.DiskMB = int64(du.FreeBytes >> 20)
	}

	ifs, err := listInterfaces()
	if err != nil {
		return nil, fmt.Errorf("list network interfaces: %w", err)
	}
	dev, ipnet, err := pickAddress(ifs, cfg.NetworkInterface, cfg.LoopbackOnly)
	if err != nil {
		return nil, err
	}
	ip := ipnet.IP.String()
	attrs["unique.network.ip-address"] = ip
	res.Networks = structs.Networks{{Mode: "host", Device: dev, IP: ip, CIDR: ipnet.String(), MBits: 1000}}
	res.NodeNetworks = []*structs.NodeNetworkResource{{Mode: "host", Device: dev, Speed: 1000,
		Addresses: []structs.NodeNetworkAddress{{Family: "ipv4", Alias: "default", Address: ip, ReservedPorts: cfg.Reserved.ReservedPorts}}}}

	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := drivers[n]
		if d.Detected && d.Healthy {
			attrs["driver."+n] = "1"
		}
		if d.Detected {
			for k, v := range d.Attributes {
				attrs["driver."+n+"."+k] = v
			}
		}
	}

	httpAddr := cfg.AdvertiseHTTP
	if httpAddr == "" && cfg.BindAddr != "" {
		httpAddr = cfg.BindAddr
	}
	node := &structs.Node{
		ID: id, SecretID: secret, Name: name, Datacenter: cfg.Datacenter, NodeClass: cfg.NodeClass,
		NodePool: cfg.NodePool, HTTPAddr: httpAddr, Attributes: attrs, Meta: copyMap(cfg.Meta),
		NodeResources: res, Drivers: drivers, Status: structs.NodeStatusReady,
		ReservedResources: &structs.NodeReservedResources{
			Cpu:      structs.NodeReservedCpuResources{CpuShares: cfg.Reserved.CPU},
			Memory:   structs.NodeReservedMemoryResources{MemoryMB: cfg.Reserved.MemoryMB},
			Disk:     structs.NodeReservedDiskResources{DiskMB: cfg.Reserved.DiskMB},
			Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: cfg.Reserved.ReservedPorts},
		},
		SchedulingEligibility: structs.NodeSchedulingEligible,
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
