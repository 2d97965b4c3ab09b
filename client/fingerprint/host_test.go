package fingerprint

import (
	"net"
	"os"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

func TestHostVolumesAreFingerprintedIntoTheNode(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Config{HostVolumes: map[string]*structs.ClientHostVolumeConfig{
		"data":  {Path: dir},
		"certs": {Path: dir, ReadOnly: true},
	}}
	n := newNode()
	if err := (hostVolumeFingerprinter{stat: os.Stat}).Fingerprint(cfg, n); err != nil {
		t.Fatal(err)
	}
	got := n.NodeResources.HostVolumes
	if len(got) != 2 || got["data"].Name != "data" || got["data"].Path != dir || got["data"].ReadOnly || !got["certs"].ReadOnly {
		t.Fatalf("host volumes: %+v", got)
	}
	got["data"].Path = "/changed"
	if cfg.HostVolumes["data"].Path != dir {
		t.Fatal("the node shares the config's volume blocks")
	}
}

func TestAHostVolumeWithoutItsPathStopsTheClient(t *testing.T) {
	cfg := &config.Config{HostVolumes: map[string]*structs.ClientHostVolumeConfig{"data": {Path: "/does/not/exist"}}}
	err := (hostVolumeFingerprinter{stat: os.Stat}).Fingerprint(cfg, newNode())
	if err == nil || !strings.Contains(err.Error(), `client host_volume "data": path /does/not/exist`) {
		t.Fatalf("want an error naming the volume and path, got %v", err)
	}
}

func TestHostNetworksGetTheirAddresses(t *testing.T) {
	ipnet := func(s string) *net.IPNet {
		ip, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		n.IP = ip
		return n
	}
	ifs := []iface{
		{Name: "lo", Up: true, Loopback: true, Addrs: []*net.IPNet{ipnet("127.0.0.1/8")}},
		{Name: "eth0", Up: true, Addrs: []*net.IPNet{ipnet("192.168.1.10/24")}},
		{Name: "eth1", Up: true, Addrs: []*net.IPNet{ipnet("fd00::5/64"), ipnet("10.20.0.4/16")}},
	}
	cfg := &config.Config{HostNetworks: map[string]*structs.ClientHostNetworkConfig{
		"private": {CIDR: "10.20.0.0/16", ReservedPorts: "22"},
		"public":  {Interface: "eth0"},
		"absent":  {CIDR: "172.31.0.0/16"},
		"gone":    {Interface: "eth9"},
	}}
	n := newNode()
	n.NodeResources.NodeNetworks = []*structs.NodeNetworkResource{{Mode: "host", Device: "eth0", Addresses: []structs.NodeNetworkAddress{{Alias: "default", Address: "192.168.1.10"}}}}
	f := hostNetworkFingerprinter{interfaces: func() ([]iface, error) { return ifs, nil }}
	if err := f.Fingerprint(cfg, n); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, nn := range n.NodeResources.NodeNetworks {
		for _, a := range nn.Addresses {
			got[a.Alias] = nn.Device + " " + a.Address + " " + a.ReservedPorts
		}
	}
	want := map[string]string{"default": "eth0 192.168.1.10 ", "private": "eth1 10.20.0.4 22", "public": "eth0 192.168.1.10 "}
	if len(got) != len(want) {
		t.Fatalf("networks: got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("network %s: got %q, want %q (all %v)", k, got[k], v, got)
		}
	}
	if len(n.NodeResources.HostNetworks) != 4 || n.NodeResources.HostNetworks["gone"].Interface != "eth9" {
		t.Fatalf("the configured networks are kept on the node: %+v", n.NodeResources.HostNetworks)
	}
	node := &structs.Node{NodeResources: n.NodeResources}
	if !structs.NodeHasHostNetwork(node, "private") || structs.NodeHasHostNetwork(node, "absent") {
		t.Fatal("NodeHasHostNetwork disagrees with the fingerprint")
	}
}
