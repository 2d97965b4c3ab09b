package api

// HostStats is a client's sample of its host (GET /v1/client/stats), in
// Nomad's shape. CPU percentages cover the time since the agent's
// previous sample (since boot for the first); CPUTicksConsumed is the CPU
// in use in MHz; Uptime is in seconds; Timestamp in Unix nanoseconds.
type HostStats struct {
	Memory           *HostMemoryStats
	CPU              []*HostCPUStats
	DiskStats        []*HostDiskStats
	AllocDirStats    *HostDiskStats
	DeviceStats      []*DeviceGroupStats
	Uptime           uint64
	CPUTicksConsumed float64
	Timestamp        int64
}

// HostMemoryStats is in bytes.
type HostMemoryStats struct {
	Total     uint64
	Available uint64
	Used      uint64
	Free      uint64
}

// HostCPUStats is one core's use in percent.
type HostCPUStats struct {
	CPU    string
	User   float64
	System float64
	Idle   float64
}

// HostDiskStats is one filesystem's use; sizes in bytes.
type HostDiskStats struct {
	Device            string
	Mountpoint        string
	Size              uint64
	Used              uint64
	Available         uint64
	UsedPercent       float64
	InodesUsedPercent float64
}

// DeviceGroupStats would describe a group of devices (GPUs and the like).
// Drover has no device plugins, so the list is always empty; the type is
// here so the shape matches Nomad's.
type DeviceGroupStats struct {
	Vendor string
	Type   string
	Name   string
}

// Stats samples a node's host (GET /v1/client/stats?node_id=). An empty
// nodeID asks the agent's own client.
func (n *Nodes) Stats(nodeID string, q *QueryOptions) (*HostStats, error) {
	if nodeID != "" {
		q = withParams(q, "node_id", nodeID)
	}
	var out HostStats
	if _, err := n.c.query("/v1/client/stats", &out, q); err != nil {
		return nil, err
	}
	return &out, nil
}
