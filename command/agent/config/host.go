package config

// The client's host_volume and host_network blocks decode into the
// structs the node carries (structs.ClientHostVolumeConfig,
// structs.ClientHostNetworkConfig), so nothing converts them on the way.

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"

	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/structs"
)

// validHostName is what a host volume or network name may hold: the
// scheduler reports it and per_alloc appends "[<index>]" to it, so the
// brackets are allowed.
var validHostName = regexp.MustCompile(`^[a-zA-Z0-9_.\-\[\]]{1,128}$`)

func (d *decoder) decodeHostVolume(b *hcl.Block, c *ClientConfig) {
	v := &structs.ClientHostVolumeConfig{Name: b.Labels[0]}
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
	addBlock(d, b, &c.HostVolumes, "client.host_volume", v.Name, v)
}

func (d *decoder) decodeHostNetwork(b *hcl.Block, c *ClientConfig) {
	n := &structs.ClientHostNetworkConfig{Name: b.Labels[0]}
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
	if err := validateHostNetwork(n); err != nil {
		d.problem(b.DefRange, path, "%v", err)
		return
	}
	addBlock(d, b, &c.HostNetworks, "client.host_network", n.Name, n)
}

// addBlock adds one decoded labelled block to m by its name; a name
// declared twice in one file is an error (across files the later wins,
// see Merge).
func addBlock[V any](d *decoder, b *hcl.Block, m *map[string]*V, kind, name string, v *V) {
	if *m == nil {
		*m = map[string]*V{}
	}
	if _, dup := (*m)[name]; dup {
		d.problem(b.DefRange, kind, "%q is declared twice in one file", name)
		return
	}
	(*m)[name] = v
}

// validateHostNetwork checks that the network names its address one way.
func validateHostNetwork(n *structs.ClientHostNetworkConfig) error {
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
