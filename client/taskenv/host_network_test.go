package taskenv

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// A group network has one IP for all its ports, but a port on a
// host_network has its own address: the port's wins in NOMAD_IP_ and
// NOMAD_ADDR_, whatever the network block says.
func TestAHostNetworkPortGetsItsOwnAddress(t *testing.T) {
	node, alloc, task := fixture()
	shared := &alloc.AllocatedResources.Shared
	shared.Ports = structs.AllocatedPorts{
		{Label: "http", Value: 25000, HostIP: "10.0.0.5"},
		{Label: "db", Value: 25002, To: 5432, HostIP: "192.168.7.9"},
	}
	shared.Networks = structs.Networks{{Mode: "host", IP: "10.0.0.5", DynamicPorts: []structs.Port{
		{Label: "http", Value: 25000},
		{Label: "db", Value: 25002, To: 5432, HostNetwork: "private"},
	}}}
	got := Build(node, alloc, task, "global", Dirs{}, nil).Map()
	for k, v := range map[string]string{
		"NOMAD_IP_http": "10.0.0.5", "NOMAD_ADDR_http": "10.0.0.5:25000",
		"NOMAD_IP_db": "192.168.7.9", "NOMAD_ADDR_db": "192.168.7.9:25002", "NOMAD_HOST_ADDR_db": "192.168.7.9:25002",
		"NOMAD_PORT_db": "5432",
	} {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
