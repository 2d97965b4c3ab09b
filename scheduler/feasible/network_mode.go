package feasible

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// networkModeChecker refuses a node that cannot give the group's network
// mode: bridge and none need the client's CNI plugins (and root), and
// cni/<name> a network of that name in its cni_config_dir. A client
// advertises the modes it can give among its networks (Nomad's shape);
// host needs nothing.
type networkModeChecker struct {
	mode string
}

// newNetworkModeChecker returns the checker for the group's mode; ok is
// false for host mode.
func newNetworkModeChecker(tg *structs.TaskGroup) (networkModeChecker, bool) {
	if len(tg.Networks) == 0 {
		return networkModeChecker{}, false
	}
	mode := tg.Networks[0].Mode
	if mode == "" || mode == "host" {
		return networkModeChecker{}, false
	}
	return networkModeChecker{mode: mode}, true
}

func (c networkModeChecker) check(node *structs.Node) string {
	if node.NodeResources != nil {
		for _, n := range node.NodeResources.Networks {
			if n != nil && n.Mode == c.mode {
				return ""
			}
		}
	}
	if name, ok := strings.CutPrefix(c.mode, "cni/"); ok {
		return fmt.Sprintf("missing CNI network %q", name)
	}
	return fmt.Sprintf("missing network mode %q", c.mode)
}
