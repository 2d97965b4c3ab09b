package api

// NetworkResource asks for a network and ports on it. Ports with a fixed
// host port are ReservedPorts; ports the client picks are DynamicPorts.
type NetworkResource struct {
	// Mode is "host" (the default), "bridge", "none", or "cni/<name>".
	Mode   string
	Device string
	CIDR   string
	IP     string

	// DNS overrides the resolver configuration inside the allocation's
	// network namespace (bridge and CNI modes).
	DNS *DNSConfig

	ReservedPorts []Port
	DynamicPorts  []Port
	Hostname      string

	// MBits is the bandwidth asked for. Deprecated by Nomad 0.12 and
	// ignored by the scheduler; kept so that old jobs decode.
	MBits *int
}

// HasPorts reports whether the network asks for any port.
func (n *NetworkResource) HasPorts() bool {
	return n != nil && len(n.ReservedPorts)+len(n.DynamicPorts) > 0
}

// Port is one labelled port. The label names it in the task environment
// (NOMAD_PORT_<label>) and in services.
type Port struct {
	Label string

	// Value is the host port: fixed for reserved ports, chosen by the
	// client for dynamic ones (zero in a job).
	Value int

	// To is the port inside the allocation's network namespace that the
	// host port maps to; zero means the same as Value.
	To int

	// HostNetwork names the client host network to bind on.
	HostNetwork string

	// IgnoreCollision lets a reserved port be shared with other
	// allocations (the workload sets SO_REUSEPORT).
	IgnoreCollision bool
}

// DNSConfig is the resolver configuration written into the allocation.
type DNSConfig struct {
	Servers  []string
	Searches []string
	Options  []string
}
