package feasible

import (
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// ComputeClass returns the node's computed class: a stable hash of
// everything a class-cacheable constraint may read (datacenter, node pool,
// node class, attributes and meta), leaving out keys named unique.*. Two
// nodes with the same computed class pass or fail every such constraint
// alike, so the stack checks one node per class and reuses the answer.
// Code that registers or updates a node stores the result in
// Node.ComputedClass.
//
// The hash covers neither resources nor driver health: those change while
// the class stays the same, and are checked on every node.
func ComputeClass(node *structs.Node) (string, error) {
	if node == nil {
		return "", fmt.Errorf("computing the class of a nil node")
	}
	h := fnv.New64a()
	write := func(parts ...string) {
		for _, p := range parts {
			// Length-prefixed, so "ab"+"c" and "a"+"bc" differ.
			fmt.Fprintf(h, "%d:%s;", len(p), p)
		}
	}
	pool := node.NodePool
	if pool == "" {
		pool = structs.DefaultNodePool
	}
	write("dc", node.Datacenter, "pool", pool, "class", node.NodeClass)
	// Attributes come sorted by key; meta is sorted here. Both hash as
	// they did when attributes were a map, so classes stay the same.
	var attrs [][2]string
	for k, v := range node.Attributes.All() {
		if !strings.HasPrefix(k, "unique.") {
			attrs = append(attrs, [2]string{k, v})
		}
	}
	writeSection := func(name string, kvs [][2]string) {
		write(name, strconv.Itoa(len(kvs)))
		for _, kv := range kvs {
			write(kv[0], kv[1])
		}
	}
	writeSection("attr", attrs)
	meta := make([][2]string, 0, len(node.Meta))
	for _, k := range slices.Sorted(maps.Keys(node.Meta)) {
		if !strings.HasPrefix(k, "unique.") {
			meta = append(meta, [2]string{k, node.Meta[k]})
		}
	}
	writeSection("meta", meta)
	return fmt.Sprintf("v1:%016x", h.Sum64()), nil
}

// classVerdict is the cached outcome of a group's class-wide constraints on
// one computed class, with the reason of the first failure.
type classVerdict struct {
	ok     bool
	reason string
}

// classEligibility caches class verdicts per task group for the job, and
// remembers whether any constraint escaped the cache.
type classEligibility struct {
	groups  map[string]map[string]classVerdict // group -> class -> verdict
	escaped bool
}

func newClassEligibility() *classEligibility {
	return &classEligibility{groups: map[string]map[string]classVerdict{}}
}

// reset forgets everything (a different job).
func (e *classEligibility) reset() {
	e.groups = map[string]map[string]classVerdict{}
	e.escaped = false
}

func (e *classEligibility) get(group, class string) (classVerdict, bool) {
	v, ok := e.groups[group][class]
	return v, ok
}

func (e *classEligibility) set(group, class string, v classVerdict) {
	m := e.groups[group]
	if m == nil {
		m = map[string]classVerdict{}
		e.groups[group] = m
	}
	m[class] = v
}

// summary merges the groups: a class is eligible if some group may run on
// it, ineligible if every group that looked at it was refused.
func (e *classEligibility) summary() map[string]bool {
	out := map[string]bool{}
	for _, classes := range e.groups {
		for class, v := range classes {
			out[class] = out[class] || v.ok
		}
	}
	return out
}
