package command

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/api"
)

// nodeHostVolumes is node status -verbose's Host Volumes table, Nomad's.
func nodeHostVolumes(n *api.Node) string {
	if len(n.HostVolumes) == 0 {
		return ""
	}
	rows := []string{"Name|ReadOnly|Source"}
	for _, name := range sortedKeys(n.HostVolumes) {
		v := n.HostVolumes[name]
		rows = append(rows, fmt.Sprintf("%s|%t|%s", name, v.ReadOnly, v.Path))
	}
	return columns(rows)
}

// nodeHostNetworks is node status -verbose's Host Networks table: each
// declared network with the address the client found for it (<none>
// when it has none on this host, and ports asking for it are not placed
// here).
func nodeHostNetworks(n *api.Node) string {
	if len(n.HostNetworks) == 0 {
		return ""
	}
	addrs := map[string][]string{}
	if n.NodeResources != nil {
		for _, nn := range n.NodeResources.NodeNetworks {
			for _, a := range nn.Addresses {
				addrs[a.Alias] = append(addrs[a.Alias], a.Address)
			}
		}
	}
	rows := []string{"Name|CIDR|Interface|Address|ReservedPorts"}
	for _, name := range sortedKeys(n.HostNetworks) {
		hn := n.HostNetworks[name]
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%s|%s", name, orNone(hn.CIDR), orNone(hn.Interface),
			orNone(strings.Join(addrs[name], ",")), orNone(hn.ReservedPorts)))
	}
	return columns(rows)
}
