package feasible

import (
	"fmt"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// ReadyNodesInDCsAndPool returns the nodes that may take new work (ready,
// eligible, not draining) in one of the datacenters dcs (each may be a glob
// with "*", as in Nomad jobspecs) and in node pool pool ("all" or empty
// means any pool), in the snapshot's order, and how many of them each
// datacenter has.
func ReadyNodesInDCsAndPool(state State, dcs []string, pool string) ([]*structs.Node, map[string]int, error) {
	iter, err := state.Nodes(nil)
	if err != nil {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	var out []*structs.Node
	perDC := map[string]int{}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		node := raw.(*structs.Node)
		if !node.Ready() || !InDatacenters(node.Datacenter, dcs) || !inPool(node, pool) {
			continue
		}
		out = append(out, node)
		perDC[node.Datacenter]++
	}
	return out, perDC, nil
}

// InDatacenters reports whether dc matches one of the patterns, each a
// datacenter name or a glob with "*" in it.
func InDatacenters(dc string, patterns []string) bool {
	for _, p := range patterns {
		if globMatch(p, dc) {
			return true
		}
	}
	return false
}

// inPool reports whether the node is in pool; "all" and "" match any.
func inPool(node *structs.Node, pool string) bool {
	if pool == "" || pool == structs.AllNodePools {
		return true
	}
	np := node.NodePool
	if np == "" {
		np = structs.DefaultNodePool
	}
	return np == pool
}

// globMatch matches s against a pattern in which "*" stands for any run of
// characters (including none) and everything else is literal.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
