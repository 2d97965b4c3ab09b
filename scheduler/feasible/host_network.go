package feasible

import (
	"fmt"
	"sort"

	"github.com/drover-sched/drover/structs"
)

// hostNetworkChecker refuses a node that lacks a host_network one of the
// group's ports asks for: the port must be bound on that network's
// address, and a node without it has none to bind.
type hostNetworkChecker struct {
	networks []string
}

// newHostNetworkChecker lists the named host networks of the group's
// ports (other than the default one); ok is false when there are none.
func newHostNetworkChecker(ask *structs.NetworkResource) (hostNetworkChecker, bool) {
	if ask == nil {
		return hostNetworkChecker{}, false
	}
	seen := map[string]bool{}
	var c hostNetworkChecker
	for _, ports := range [][]structs.Port{ask.ReservedPorts, ask.DynamicPorts} {
		for _, p := range ports {
			if p.HostNetwork == "" || p.HostNetwork == structs.DefaultHostNetwork || seen[p.HostNetwork] {
				continue
			}
			seen[p.HostNetwork] = true
			c.networks = append(c.networks, p.HostNetwork)
		}
	}
	sort.Strings(c.networks)
	return c, len(c.networks) > 0
}

func (c hostNetworkChecker) check(node *structs.Node) string {
	for _, n := range c.networks {
		if !structs.NodeHasHostNetwork(node, n) {
			return fmt.Sprintf("missing host network %q", n)
		}
	}
	return ""
}
