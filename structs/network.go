package structs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Default range dynamic ports are chosen from, as in Nomad.
const (
	DefaultMinDynamicPort = 20000
	DefaultMaxDynamicPort = 32000
	maxValidPort          = 65535
)

// NetworkResource is a `network` block: the ports a group (or, in the legacy
// form, a task) needs. ReservedPorts are static; DynamicPorts get a Value
// chosen by the scheduler.
type NetworkResource struct {
	Mode          string
	Device        string
	CIDR          string
	IP            string
	Hostname      string
	MBits         int
	DNS           *DNSConfig
	ReservedPorts []Port
	DynamicPorts  []Port
}

// DNSConfig is a network block's dns settings, kept for the task runtime.
type DNSConfig struct {
	Servers  []string
	Searches []string
	Options  []string
}

// Port is one labelled port. Value is the host port (fixed for static ports,
// chosen for dynamic ones); To is the port inside the task, 0 meaning Value.
type Port struct {
	Label       string
	Value       int
	To          int
	HostNetwork string
}

// Networks is a list of network blocks.
type Networks []*NetworkResource

// Canonicalize fills defaults.
func (n *NetworkResource) Canonicalize() {
	if n.Mode == "" {
		n.Mode = "host"
	}
	for i := range n.ReservedPorts {
		if n.ReservedPorts[i].HostNetwork == "" {
			n.ReservedPorts[i].HostNetwork = "default"
		}
	}
	for i := range n.DynamicPorts {
		if n.DynamicPorts[i].HostNetwork == "" {
			n.DynamicPorts[i].HostNetwork = "default"
		}
	}
}

// Copy returns a deep copy.
func (n *NetworkResource) Copy() *NetworkResource {
	if n == nil {
		return nil
	}
	c := *n
	c.ReservedPorts = append([]Port(nil), n.ReservedPorts...)
	c.DynamicPorts = append([]Port(nil), n.DynamicPorts...)
	if n.DNS != nil {
		d := *n.DNS
		d.Servers = copyStrings(d.Servers)
		d.Searches = copyStrings(d.Searches)
		d.Options = copyStrings(d.Options)
		c.DNS = &d
	}
	return &c
}

// Copy returns a deep copy.
func (ns Networks) Copy() Networks {
	if ns == nil {
		return nil
	}
	c := make(Networks, len(ns))
	for i, n := range ns {
		c[i] = n.Copy()
	}
	return c
}

// Port returns the port with the label and whether it is static.
func (ns Networks) Port(label string) (Port, bool) {
	for _, n := range ns {
		for _, p := range n.ReservedPorts {
			if p.Label == label {
				return p, true
			}
		}
		for _, p := range n.DynamicPorts {
			if p.Label == label {
				return p, true
			}
		}
	}
	return Port{}, false
}

func (n *NetworkResource) validate(p problems) {
	switch n.Mode {
	case "", "host", "bridge", "none":
	default:
		if !strings.HasPrefix(n.Mode, "cni/") {
			p.add("mode %q is not supported (want host, bridge, none or cni/<name>)", n.Mode)
		}
	}
	seen := map[string]bool{}
	static := map[int]string{}
	for _, port := range n.ReservedPorts {
		if port.Label == "" {
			p.add("static port %d has no label", port.Value)
		} else if seen[port.Label] {
			p.add("port label %q is used twice", port.Label)
		}
		seen[port.Label] = true
		if port.Value <= 0 || port.Value > maxValidPort {
			p.add("port %q: static value %d must be between 1 and %d", port.Label, port.Value, maxValidPort)
		} else if other, dup := static[port.Value]; dup {
			p.add("port %q: static port %d is also used by port %q", port.Label, port.Value, other)
		}
		static[port.Value] = port.Label
		if port.To < -1 || port.To > maxValidPort {
			p.add("port %q: to = %d must be between -1 and %d", port.Label, port.To, maxValidPort)
		}
	}
	for _, port := range n.DynamicPorts {
		if port.Label == "" {
			p.add("a dynamic port has no label")
		} else if seen[port.Label] {
			p.add("port label %q is used twice", port.Label)
		}
		seen[port.Label] = true
		if port.Value != 0 {
			p.add("port %q: a dynamic port must not set static = %d (use a static port instead)", port.Label, port.Value)
		}
		if port.To < -1 || port.To > maxValidPort {
			p.add("port %q: to = %d must be between -1 and %d", port.Label, port.To, maxValidPort)
		}
	}
}

// ParsePortRanges parses a port spec such as "22,80,8000-8010" into a sorted
// list of ports, naming the bad element on error.
func ParsePortRanges(spec string) ([]int, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	set := map[int]struct{}{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		start, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil {
			return nil, fmt.Errorf("port spec %q: %q is not a port number", spec, lo)
		}
		end := start
		if isRange {
			if end, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil {
				return nil, fmt.Errorf("port spec %q: %q is not a port number", spec, hi)
			}
		}
		if start < 1 || end > maxValidPort || end < start {
			return nil, fmt.Errorf("port spec %q: range %q must be within 1-%d and ascending", spec, part, maxValidPort)
		}
		for p := start; p <= end; p++ {
			set[p] = struct{}{}
		}
	}
	out := make([]int, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out, nil
}
