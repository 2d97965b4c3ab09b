package state

import (
	"encoding/json"
	"maps"
	"reflect"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// What a client registers about its machine is mostly equal across a
// fleet and across the versions of one node: every machine of one type
// reports the same resources, reservations and drivers, and a client that
// registers again (a restart, a new fingerprint) mostly repeats what it
// sent before. Each registration arrives freshly decoded, so without help
// the store would keep one copy of each per node and per stored version,
// and the event stream keeps recent versions alive. The store keeps one
// copy of each equal sub-record instead (share_values.go explains the
// tables): first the node's own stored version's, then any other node's.
//
// Sharing is safe because stored nodes are never changed: every write
// stores a new version, and copyNodeForUpdate shares these sub-records
// rather than writing into them. A client changing its resources stores
// new ones and leaves the nodes that shared the old ones as they were.

// nodeShareMaxKey bounds the key a sub-record is looked up by: a larger
// one (a machine with many interfaces or drivers) is rarely equal to
// another machine's and is shared only with the node's own last version.
const nodeShareMaxKey = 4096

var (
	sharedNodeResources     valueTable[*structs.NodeResources]
	sharedReservedResources valueTable[*structs.NodeReservedResources]
	sharedDriverInfos       valueTable[*structs.DriverInfo]
	sharedDriverMaps        valueTable[map[string]*structs.DriverInfo]
)

// shareNodeRegistration replaces the registered sub-records of n, the
// store's own copy of a node being registered, with equal ones already
// stored. prev is the node's stored version, nil for a new node.
func shareNodeRegistration(n, prev *structs.Node) {
	internNode(n)
	if prev == nil {
		prev = &structs.Node{}
	}
	n.Attributes = shareNodeAttributes(n.Attributes, prev.Attributes)
	n.Meta = sameMap(n.Meta, prev.Meta)
	n.Links = sameMap(n.Links, prev.Links)
	n.NodeResources = shareNodePart(&sharedNodeResources, n.NodeResources, prev.NodeResources)
	n.ReservedResources = shareNodePart(&sharedReservedResources, n.ReservedResources, prev.ReservedResources)
	n.Drivers = shareDrivers(n.Drivers, prev.Drivers)
}

// shareNodeAttributes returns prev if it equals a, else a on the kept key
// set equal to a's (prev's if the node kept its keys) with its values
// interned. A node's attributes are its own, but every node of a machine
// kind has the same keys, which the store keeps once; a node that
// registers again with the same fingerprint keeps its stored attributes
// whole.
func shareNodeAttributes(a, prev structs.Attributes) structs.Attributes {
	if a.IsNil() {
		return a
	}
	if a.Equal(prev) {
		return prev
	}
	keys := prev.Keys()
	if !keys.Equal(a.Keys()) {
		keys = shareAttributeKeys(a.Keys())
	}
	return a.Rekeyed(keys, internAttributeValue)
}

// sharedAttributeKeys holds the attribute key sets of stored nodes, by
// their keys joined.
var sharedAttributeKeys valueTable[*structs.AttributeKeys]

// shareAttributeKeys returns the kept key set equal to k, else k's keys
// interned, which it keeps. A key set longer than nodeShareMaxKey in all
// is not kept (it bounds the table in bytes): it is interned only.
func shareAttributeKeys(k *structs.AttributeKeys) *structs.AttributeKeys {
	var key strings.Builder
	for name := range k.All() {
		if key.Len()+len(name)+1 > nodeShareMaxKey {
			return k.Shared(interned.intern)
		}
		key.WriteString(name)
		key.WriteByte(0)
	}
	return sharedAttributeKeys.share(key.String(), k.Shared(interned.intern))
}

// sameMap returns prev if it equals m, else m.
func sameMap(m, prev map[string]string) map[string]string {
	if m != nil && prev != nil && len(m) == len(prev) && maps.Equal(m, prev) {
		return prev
	}
	return m
}

// shareNodePart returns prev if it equals v, else the kept value equal to
// v, else v.
func shareNodePart[T any](table *valueTable[*T], v, prev *T) *T {
	if v == nil {
		return nil
	}
	if prev != nil && reflect.DeepEqual(v, prev) {
		return prev
	}
	key, ok := nodeShareKey(v)
	if !ok {
		return v
	}
	return table.share(key, v)
}

// shareDrivers shares each driver's info (drivers are reported by name
// with the same attributes on every machine that has them), then the map
// as a whole.
func shareDrivers(m, prev map[string]*structs.DriverInfo) map[string]*structs.DriverInfo {
	if m == nil {
		return nil
	}
	for name, d := range m {
		if d != nil {
			m[name] = shareNodePart(&sharedDriverInfos, d, prev[name])
		}
	}
	if prev != nil && len(prev) == len(m) && maps.Equal(m, prev) {
		return prev // every info is prev's own by now
	}
	key, ok := nodeShareKey(m)
	if !ok {
		return m
	}
	return sharedDriverMaps.share(key, m)
}

// nodeShareKey is v's JSON, which covers every exported field and sorts
// map keys, if it is short enough to look up by.
func nodeShareKey(v any) (string, bool) {
	b, err := json.Marshal(v)
	if err != nil || len(b) > nodeShareMaxKey {
		return "", false
	}
	return string(b), true
}
