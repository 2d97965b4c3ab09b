package fingerprint

import (
	"fmt"
	"net"
	"sort"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// hostNetworkFingerprinter finds the address of each host_network block
// (the first address of the named interface, or the first address of any
// interface inside the CIDR) and lists it among the node's networks
// under the block's name, where the scheduler finds it for ports that ask
// for the network. A network whose address is not on this host is left
// out and logged: the node then simply does not offer it, as in Nomad.
type hostNetworkFingerprinter struct {
	interfaces func() ([]iface, error)
}

func (f hostNetworkFingerprinter) Fingerprint(cfg *config.Config, node *Target) error {
	if len(cfg.HostNetworks) == 0 {
		return nil
	}
	ifs, err := f.interfaces()
	if err != nil {
		return fmt.Errorf("list network interfaces: %w", err)
	}
	names := make([]string, 0, len(cfg.HostNetworks))
	for name := range cfg.HostNetworks {
		names = append(names, name)
	}
	sort.Strings(names)
	res := node.NodeResources
	res.HostNetworks = make(map[string]*structs.ClientHostNetworkConfig, len(names))
	for _, name := range names {
		hn := cfg.HostNetworks[name].Copy()
		hn.Name = name
		res.HostNetworks[name] = hn
		dev, ip, err := hostNetworkAddress(ifs, hn)
		if err != nil {
			return fmt.Errorf("client host_network %q: %w", name, err)
		}
		if ip == nil {
			if cfg.Logger != nil {
				cfg.Logger.Warn("host network has no address on this host; ports asking for it are not placed here", "host_network", name, "cidr", hn.CIDR, "interface", hn.Interface)
			}
			continue
		}
		family := "ipv4"
		if ip.To4() == nil {
			family = "ipv6"
		}
		res.NodeNetworks = append(res.NodeNetworks, &structs.NodeNetworkResource{
			Mode: "host", Device: dev,
			Addresses: []structs.NodeNetworkAddress{{Family: family, Alias: name, Address: ip.String(), ReservedPorts: hn.ReservedPorts}},
		})
	}
	return nil
}

// hostNetworkAddress is the interface and address a host network names:
// the named interface's first address (IPv4 first), or the first address
// inside the CIDR. A nil ip means none is on this host.
func hostNetworkAddress(ifs []iface, hn *structs.ClientHostNetworkConfig) (string, net.IP, error) {
	if hn.Interface != "" {
		for _, i := range ifs {
			if i.Name != hn.Interface {
				continue
			}
			var v6 net.IP
			for _, a := range i.Addrs {
				if v4 := a.IP.To4(); v4 != nil {
					return i.Name, v4, nil
				}
				if v6 == nil && !a.IP.IsLinkLocalUnicast() {
					v6 = a.IP
				}
			}
			if v6 != nil {
				return i.Name, v6, nil
			}
		}
		return "", nil, nil
	}
	_, cidr, err := net.ParseCIDR(hn.CIDR)
	if err != nil {
		return "", nil, fmt.Errorf("cidr %q: %w", hn.CIDR, err)
	}
	for _, i := range ifs {
		for _, a := range i.Addrs {
			if cidr.Contains(a.IP) {
				ip := a.IP
				if v4 := ip.To4(); v4 != nil {
					ip = v4
				}
				return i.Name, ip, nil
			}
		}
	}
	return "", nil, nil
}
