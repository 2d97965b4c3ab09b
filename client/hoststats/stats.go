package hoststats

import "time"

// Stats is one sample of the host.
type Stats struct {
	Memory Memory
	// CPU has one entry per core, "cpu0", "cpu1", ...
	CPU []CPU
	// Disks are the mounted block devices, and the filesystem of the data
	// dir even when it is not one (an overlay in a container).
	Disks []Disk
	// AllocDir is the filesystem holding the alloc directories.
	AllocDir Disk
	// Uptime is in seconds.
	Uptime uint64
	// CPUTicksConsumed is the CPU in use across all cores, in MHz: the
	// busy fraction times the node's total compute.
	CPUTicksConsumed float64
	Timestamp        time.Time
}

// Memory is in bytes. Used is Total less Available (what the kernel could
// hand out without swapping), not less Free.
type Memory struct {
	Total, Available, Used, Free uint64
}

// CPU is one core's use, in percent of its time, since the previous
// sample.
type CPU struct {
	Name               string
	User, System, Idle float64
}

// Disk is one filesystem's use; sizes in bytes.
type Disk struct {
	Device, Mountpoint    string
	Size, Used, Available uint64
	UsedPercent           float64
	InodesUsedPercent     float64
}
