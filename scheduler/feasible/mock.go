package feasible

import (
	"fmt"
	"sync/atomic"

	"github.com/drover-sched/drover/structs"
)

// Builders for tests, here and in other packages (the schedulers' tests
// reuse them). Each returns a fresh, canonical object that callers change
// freely. IDs come from a counter rather than a random source, so fixtures
// are reproducible and this package keeps no global randomness.

var mockSeq atomic.Uint64

// MockID returns a unique, UUID-shaped identifier.
func MockID() string {
	n := mockSeq.Add(1)
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(n>>16), n)
}

// MockNode returns a ready, eligible Linux node in dc1 and the default pool
// with 4000 MHz, 8192 MB memory and 100 GB disk (100 MHz, 256 MB, 4 GB and
// port 22 reserved), healthy exec, raw_exec and mock_driver drivers, and
// its computed class filled in.
func MockNode() *structs.Node {
	id := MockID()
	n := &structs.Node{
		ID:         id,
		SecretID:   MockID(),
		Datacenter: "dc1",
		Name:       "node-" + id[len(id)-6:],
		NodePool:   structs.DefaultNodePool,
		NodeClass:  "linux-medium-pci",
		HTTPAddr:   "192.168.0.100:4646",
		Attributes: structs.NewAttributes(map[string]string{
			"kernel.name":               "linux",
			"kernel.version":            "6.1.0",
			"arch":                      "x86",
			"cpu.arch":                  "amd64",
			"nomad.version":             "1.8.0",
			"driver.exec":               "1",
			"driver.mock_driver":        "1",
			"unique.cgroup.mountpoint":  "/sys/fs/cgroup",
			"unique.network.ip-address": "192.168.0.100",
			"unique.hostname":           "host-" + id[len(id)-6:],
		}),
		Meta: map[string]string{
			"pci-dss":  "true",
			"database": "mysql",
			"version":  "5.6",
		},
		NodeResources: &structs.NodeResources{
			Cpu:            structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
			Memory:         structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:           structs.NodeDiskResources{DiskMB: 100 * 1024},
			MinDynamicPort: structs.DefaultMinDynamicPort,
			MaxDynamicPort: structs.DefaultMaxDynamicPort,
		},
		ReservedResources: &structs.NodeReservedResources{
			Cpu:      structs.NodeReservedCpuResources{CpuShares: 100},
			Memory:   structs.NodeReservedMemoryResources{MemoryMB: 256},
			Disk:     structs.NodeReservedDiskResources{DiskMB: 4 * 1024},
			Networks: structs.NodeReservedNetworkResources{ReservedHostPorts: "22"},
		},
		Drivers: map[string]*structs.DriverInfo{
			"exec":        {Detected: true, Healthy: true},
			"raw_exec":    {Detected: true, Healthy: true},
			"mock_driver": {Detected: true, Healthy: true},
		},
		Links:                 map[string]string{},
		SchedulingEligibility: structs.NodeSchedulingEligible,
		Status:                structs.NodeStatusReady,
	}
	n.Canonicalize()
	MockComputeClass(n)
	return n
}

// MockComputeClass refreshes node.ComputedClass after a test changed what
// the class covers (datacenter, pool, class, attributes, meta).
func MockComputeClass(node *structs.Node) {
	class, err := ComputeClass(node)
	if err != nil {
		panic(err) // only for a nil node: a broken fixture
	}
	node.ComputedClass = class
}

// MockJob returns a canonical service job "web-<n>" for datacenter dc1 with
// one group "web" of count 10 and one exec task asking for 500 MHz, 256 MB,
// 150 MB disk and one dynamic port "http", constrained to Linux.
func MockJob() *structs.Job {
	id := MockID()
	job := &structs.Job{
		Region:      structs.DefaultRegion,
		Namespace:   structs.DefaultNamespace,
		ID:          "web-" + id[len(id)-6:],
		Type:        structs.JobTypeService,
		Priority:    structs.JobDefaultPriority,
		Datacenters: []string{"dc1"},
		NodePool:    structs.DefaultNodePool,
		Constraints: []*structs.Constraint{
			{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="},
		},
		TaskGroups: []*structs.TaskGroup{{
			Name:          "web",
			Count:         10,
			EphemeralDisk: &structs.EphemeralDisk{SizeMB: 150},
			Networks: structs.Networks{{
				Mode:         "host",
				DynamicPorts: []structs.Port{{Label: "http"}},
			}},
			Tasks: []*structs.Task{{
				Name:   "web",
				Driver: "exec",
				Config: map[string]any{"command": "/bin/date"},
				Resources: &structs.Resources{
					CPU:      500,
					MemoryMB: 256,
				},
			}},
		}},
		Status:         structs.JobStatusPending,
		Version:        0,
		CreateIndex:    42,
		ModifyIndex:    99,
		JobModifyIndex: 99,
	}
	job.Canonicalize()
	return job
}

// MockBatchJob returns MockJob as a batch job.
func MockBatchJob() *structs.Job {
	job := MockJob()
	job.Type = structs.JobTypeBatch
	return job
}

// MockSystemJob returns MockJob as a system job with group count 1.
func MockSystemJob() *structs.Job {
	job := MockJob()
	job.Type = structs.JobTypeSystem
	job.TaskGroups[0].Count = 1
	return job
}

// MockAlloc returns a pending, desired-running allocation of a fresh
// MockJob's first group, with the group's CPU, memory and disk granted and
// no ports. Set NodeID (and change the rest) before use.
func MockAlloc() *structs.Allocation {
	job := MockJob()
	return MockAllocFor(job, job.TaskGroups[0], nil, 0)
}

// MockAllocFor returns a pending, desired-running allocation of tg with
// index idx on node (nil leaves NodeID empty), granted what the group asks
// for and no ports.
func MockAllocFor(job *structs.Job, tg *structs.TaskGroup, node *structs.Node, idx int) *structs.Allocation {
	a := &structs.Allocation{
		ID:                 MockID(),
		EvalID:             MockID(),
		Namespace:          job.Namespace,
		Name:               structs.AllocName(job.ID, tg.Name, idx),
		JobID:              job.ID,
		Job:                job,
		TaskGroup:          tg.Name,
		AllocatedResources: structs.AllocatedResourcesFor(tg, nil),
		DesiredStatus:      structs.AllocDesiredStatusRun,
		ClientStatus:       structs.AllocClientStatusPending,
	}
	a.AllocatedResources.Shared.Networks = nil
	if node != nil {
		a.NodeID = node.ID
		a.NodeName = node.Name
	}
	return a
}
