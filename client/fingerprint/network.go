package fingerprint

import (
	"fmt"
	"net"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

// iface is what the network fingerprinter needs of an interface.
type iface struct {
	Name     string
	Up       bool
	Loopback bool
	Addrs    []*net.IPNet
}

// networkFingerprinter describes the advertised address (pickAddress)
// as the node's host network.
type networkFingerprinter struct {
	interfaces func() ([]iface, error)
}

func (f networkFingerprinter) Fingerprint(cfg *config.Config, node *Target) error {
	ifs, err := f.interfaces()
	if err != nil {
		return fmt.Errorf("list network interfaces: %w", err)
	}
	dev, ipnet, err := pickAddress(ifs, cfg.NetworkInterface, cfg.LoopbackOnly)
	if err != nil {
		return err
	}
	ip := ipnet.IP.String()
	node.Attributes["unique.network.ip-address"] = ip
	res := node.NodeResources
	res.Networks = structs.Networks{{Mode: "host", Device: dev, IP: ip, CIDR: ipnet.String(), MBits: 1000}}
	res.NodeNetworks = []*structs.NodeNetworkResource{{Mode: "host", Device: dev, Speed: 1000,
		Addresses: []structs.NodeNetworkAddress{{Family: "ipv4", Alias: "default", Address: ip, ReservedPorts: cfg.Reserved.ReservedPorts}}}}
	return nil
}

// hostInterfaces lists this host's interfaces with their addresses.
func hostInterfaces() ([]iface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]iface, 0, len(ifs))
	for _, i := range ifs {
		fi := iface{Name: i.Name, Up: i.Flags&net.FlagUp != 0, Loopback: i.Flags&net.FlagLoopback != 0}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				fi.Addrs = append(fi.Addrs, n)
			}
		}
		out = append(out, fi)
	}
	return out, nil
}

// pickAddress chooses the advertised address: on the named interface if
// one is named; else the first IPv4 address of the first up, non-loopback
// interface; else (or with loopbackOnly) 127.0.0.1 on the loopback.
func pickAddress(ifs []iface, name string, loopbackOnly bool) (device string, ip *net.IPNet, err error) {
	lo := &net.IPNet{IP: net.IPv4(127, 0, 0, 1).To4(), Mask: net.CIDRMask(8, 32)}
	loName := "lo"
	for _, i := range ifs {
		if i.Loopback {
			loName = i.Name
			break
		}
	}
	if loopbackOnly {
		return loName, lo, nil
	}
	for _, i := range ifs {
		if name != "" && i.Name != name {
			continue
		}
		if name == "" && (!i.Up || i.Loopback) {
			continue
		}
		for _, a := range i.Addrs {
			if v4 := a.IP.To4(); v4 != nil {
				return i.Name, &net.IPNet{IP: v4, Mask: a.Mask}, nil
			}
		}
		if name != "" {
			return "", nil, fmt.Errorf("network interface %q has no IPv4 address", name)
		}
	}
	if name != "" {
		return "", nil, fmt.Errorf("network interface %q not found", name)
	}
	return loName, lo, nil
}
