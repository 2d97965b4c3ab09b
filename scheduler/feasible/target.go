package feasible

import (
	"strings"

	"github.com/drover-sched/drover/structs"
)

// resolveTarget returns the value a constraint target names on node, and
// whether the node has it. A target that is not an interpolation is a
// literal and always "found".
//
//	${attr.<name>}        node.Attributes
//	${meta.<name>}        node.Meta
//	${node.unique.id}     node.ID
//	${node.unique.name}   node.Name
//	${node.datacenter}    node.Datacenter
//	${node.class}         node.NodeClass
//	${node.pool}          node.NodePool
func resolveTarget(target string, node *structs.Node) (string, bool) {
	if !strings.HasPrefix(target, "${") || !strings.HasSuffix(target, "}") {
		return target, true
	}
	name := target[2 : len(target)-1]
	switch {
	case strings.HasPrefix(name, "attr."):
		v, ok := node.Attributes.Get(name[len("attr."):])
		return v, ok
	case strings.HasPrefix(name, "meta."):
		v, ok := node.Meta[name[len("meta."):]]
		return v, ok
	}
	switch name {
	case "node.unique.id":
		return node.ID, true
	case "node.unique.name":
		return node.Name, true
	case "node.datacenter":
		return node.Datacenter, true
	case "node.class":
		return node.NodeClass, true
	case "node.pool":
		pool := node.NodePool
		if pool == "" {
			pool = structs.DefaultNodePool
		}
		return pool, true
	}
	return "", false
}

// targetIsUnique reports whether a target reads a value that differs from
// node to node of the same computed class (node ID and name, and
// attributes or meta named unique.*). Such targets escape the class cache.
func targetIsUnique(target string) bool {
	if !strings.HasPrefix(target, "${") {
		return false
	}
	name := strings.TrimSuffix(target[2:], "}")
	return strings.HasPrefix(name, "node.unique.") ||
		strings.HasPrefix(name, "attr.unique.") ||
		strings.HasPrefix(name, "meta.unique.")
}
