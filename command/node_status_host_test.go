package command

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/api"
)

func TestNodeStatusVerboseListsHostVolumesAndNetworks(t *testing.T) {
	n := &api.Node{
		HostVolumes: map[string]*api.HostVolumeInfo{"data": {Path: "/srv/data"}, "certs": {Path: "/etc/certs", ReadOnly: true}},
		HostNetworks: map[string]*api.HostNetworkInfo{
			"private": {Name: "private", CIDR: "10.0.0.0/8", ReservedPorts: "22"},
			"gone":    {Name: "gone", Interface: "eth9"},
		},
		NodeResources: &api.NodeResources{NodeNetworks: []*api.NodeNetworkResource{
			{Device: "eth1", Addresses: []api.NodeNetworkAddress{{Alias: "private", Address: "10.1.2.3"}}},
		}},
	}
	vols := strings.Fields(nodeHostVolumes(n))
	if strings.Join(vols, " ") != "Name ReadOnly Source certs true /etc/certs data false /srv/data" {
		t.Fatalf("host volumes:\n%s", nodeHostVolumes(n))
	}
	nets := strings.Fields(nodeHostNetworks(n))
	if strings.Join(nets, " ") != "Name CIDR Interface Address ReservedPorts gone <none> eth9 <none> <none> private 10.0.0.0/8 <none> 10.1.2.3 22" {
		t.Fatalf("host networks:\n%s", nodeHostNetworks(n))
	}
	if nodeHostVolumes(&api.Node{}) != "" || nodeHostNetworks(&api.Node{}) != "" {
		t.Fatal("a node without any prints a table")
	}
}
