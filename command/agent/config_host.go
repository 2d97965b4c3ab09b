package agent

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/structs"
)

// HostVolumeConfig is a client `host_volume "<name>" { path, read_only }`
// block: a host directory jobs may mount by name.
type HostVolumeConfig struct {
	Name     string
	Path     string
	ReadOnly bool
}

// HostNetworkConfig is a client `host_network "<name>" { cidr | interface,
// reserved_ports }` block: an address of the host that ports may ask for
// by name.
type HostNetworkConfig struct {
	Name          string
	CIDR          string
	Interface     string
	ReservedPorts string
}

// validHostName is what a host volume or network name may hold: the
// scheduler reports it and per_alloc appends "[<index>]" to it, so the
// brackets are allowed.
var validHostName = regexp.MustCompile(`^[a-zA-Z0-9_.\-\[\]]{1,128}$`)

func (d *decoder) decodeHostVolume(b *hcl.Block, c *ClientConfig) {
	v := &HostVolumeConfig{Name: b.Labels[0]}
	path := "client.host_volume." + v.Name
	if !validHostName.MatchString(v.Name) {
		d.problem(b.LabelRanges[0], "client.host_volume", "name %q must be 1 to 128 letters, digits, '_', '-', '.', '[' or ']'", v.Name)
		return
	}
	d.walk(b.Body, &section{
		path: path,
		attrs: map[string]attrFunc{
			"path":      strAttr(&v.Path),
			"read_only": boolAttr(&v.ReadOnly),
		},
	})
	switch {
	case v.Path == "":
		d.problem(b.DefRange, path+".path", "is missing: the host directory the volume mounts, such as \"/srv/data\"")
		return
	case !filepath.IsAbs(v.Path):
		d.problem(b.DefRange, path+".path", "%q must be an absolute path", v.Path)
		return
	}
	if c.HostVolumes == nil {
		c.HostVolumes = map[string]*HostVolumeConfig{}
	}
	if _, dup := c.HostVolumes[v.Name]; dup {
		d.problem(b.DefRange, "client.host_volume", "%q is declared twice in one file", v.Name)
		return
	}
	c.HostVolumes[v.Name] = v
}

func (d *decoder) decodeHostNetwork(b *hcl.Block, c *ClientConfig) {
	n := &HostNetworkConfig{Name: b.Labels[0]}
	path := "client.host_network." + n.Name
	if !validHostName.MatchString(n.Name) || n.Name == structs.DefaultHostNetwork {
		d.problem(b.LabelRanges[0], "client.host_network", "name %q must be 1 to 128 letters, digits, '_', '-', '.', and not %q (the node's advertised address)", n.Name, structs.DefaultHostNetwork)
		return
	}
	d.walk(b.Body, &section{
		path: path,
		attrs: map[string]attrFunc{
			"cidr":           strAttr(&n.CIDR),
			"interface":      strAttr(&n.Interface),
			"reserved_ports": portSpecAttr(&n.ReservedPorts),
		},
	})
	if err := n.validate(); err != nil {
		d.problem(b.DefRange, path, "%v", err)
		return
	}
	if c.HostNetworks == nil {
		c.HostNetworks = map[string]*HostNetworkConfig{}
	}
	if _, dup := c.HostNetworks[n.Name]; dup {
		d.problem(b.DefRange, "client.host_network", "%q is declared twice in one file", n.Name)
		return
	}
	c.HostNetworks[n.Name] = n
}

// validate checks that the network names its address one way.
func (n *HostNetworkConfig) validate() error {
	switch {
	case n.CIDR == "" && n.Interface == "":
		return fmt.Errorf("set cidr (such as \"10.0.0.0/8\") or interface (such as \"eth1\") to say which address the network is")
	case n.CIDR != "" && n.Interface != "":
		return fmt.Errorf("set only one of cidr and interface, not both")
	case n.CIDR != "":
		if _, _, err := net.ParseCIDR(n.CIDR); err != nil {
			return fmt.Errorf("cidr %q is not a CIDR such as \"10.0.0.0/8\"", n.CIDR)
		}
	}
	return nil
}

// clientHostVolumes converts the config blocks for the client.
func (c *ClientConfig) clientHostVolumes() map[string]*structs.ClientHostVolumeConfig {
	if len(c.HostVolumes) == 0 {
		return nil
	}
	out := make(map[string]*structs.ClientHostVolumeConfig, len(c.HostVolumes))
	for k, v := range c.HostVolumes {
		out[k] = &structs.ClientHostVolumeConfig{Name: v.Name, Path: v.Path, ReadOnly: v.ReadOnly}
	}
	return out
}

// clientHostNetworks converts the config blocks for the client.
func (c *ClientConfig) clientHostNetworks() map[string]*structs.ClientHostNetworkConfig {
	if len(c.HostNetworks) == 0 {
		return nil
	}
	out := make(map[string]*structs.ClientHostNetworkConfig, len(c.HostNetworks))
	for k, n := range c.HostNetworks {
		out[k] = &structs.ClientHostNetworkConfig{Name: n.Name, CIDR: n.CIDR, Interface: n.Interface, ReservedPorts: n.ReservedPorts}
	}
	return out
}
