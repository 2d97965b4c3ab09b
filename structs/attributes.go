package structs

import (
	"iter"
	"slices"
	"strings"
)

// Attributes is a node's fingerprint: key/value strings such as
// kernel.name=linux, cpu.numcores=8, unique.hostname=web-1.
//
// Every server holds every node's attributes, so they are kept compactly.
// A Go map of a dozen strings costs a header, a directory and a table of
// slot groups (about 680 bytes for 13 attributes, more for the 20 to 50 a
// real client sends); yet the keys are the same on every machine of a
// kind. An Attributes is instead a pointer to its sorted keys, which the
// state store shares between nodes with the same key set, and a slice of
// its values in the keys' order, exactly as long as there are keys: for
// 13 attributes, a 208-byte slice of its own.
//
// An Attributes is immutable: stored nodes share theirs with other nodes
// and with their own earlier versions, so no method changes one in place.
// With and Without return a changed copy; NewAttributes copies its map.
// Node.Copy shares it.
//
// The zero value is the nil set, as a nil map was: it has no attributes,
// and encodes as msgpack nil and JSON null. An empty set that is not nil
// (NewAttributes of an empty map) encodes as an empty map, {}. Both
// encodings are those of map[string]string (attributes_codec.go), so old
// raft entries, snapshots and Nomad's API types read and write the same
// bytes.
type Attributes struct {
	keys *AttributeKeys // nil for the nil set
	vals []string       // vals[i] is keys.names[i]'s value
}

// AttributeKeys is the sorted key set of an Attributes. The state store
// keeps one per distinct set (a node's keys are its machine kind's), and
// nodes point at it; it is never changed once made.
type AttributeKeys struct {
	names []string
}

// emptyAttributeKeys is the key set of every empty, non-nil Attributes.
var emptyAttributeKeys = &AttributeKeys{}

// NewAttributes returns the attributes of m, copied: m stays the caller's.
// A nil m gives the nil set, an empty one the empty set.
func NewAttributes(m map[string]string) Attributes {
	if m == nil {
		return Attributes{}
	}
	if len(m) == 0 {
		return Attributes{keys: emptyAttributeKeys}
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	vals := make([]string, len(names))
	for i, k := range names {
		vals[i] = m[k]
	}
	return Attributes{keys: &AttributeKeys{names: names}, vals: vals}
}

// AttributesOf returns the attributes given as key, value, key, value...;
// a later value of a repeated key wins. It reads better than a map
// literal in tests and fixtures. Without arguments it is the empty set.
func AttributesOf(kv ...string) Attributes {
	if len(kv)%2 != 0 {
		panic("structs.AttributesOf: odd number of arguments")
	}
	m := make(map[string]string, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return NewAttributes(m)
}

// IsNil reports whether a is the nil set (a nil map, before).
func (a Attributes) IsNil() bool { return a.keys == nil }

// Len is the number of attributes.
func (a Attributes) Len() int { return len(a.vals) }

// index is k's position in a's keys, or -1.
//
// A binary search: for the 10 to 60 keys nodes have, it takes 4 to 6
// string comparisons, most of them decided by the first bytes, where a
// linear scan takes half the keys (BenchmarkAttributesGet).
func (a Attributes) index(k string) int {
	if a.keys == nil {
		return -1
	}
	names := a.keys.names
	lo, hi := 0, len(names)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if names[m] < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(names) && names[lo] == k {
		return lo
	}
	return -1
}

// Get returns k's value and whether a has k.
func (a Attributes) Get(k string) (string, bool) {
	if i := a.index(k); i >= 0 {
		return a.vals[i], true
	}
	return "", false
}

// Value returns k's value, "" if a has no k (as indexing a map did).
func (a Attributes) Value(k string) string {
	v, _ := a.Get(k)
	return v
}

// All yields the attributes in order of their keys.
func (a Attributes) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if a.keys == nil {
			return
		}
		for i, k := range a.keys.names {
			if !yield(k, a.vals[i]) {
				return
			}
		}
	}
}

// Map returns a fresh map of the attributes, the caller's to change: nil
// for the nil set.
func (a Attributes) Map() map[string]string {
	if a.keys == nil {
		return nil
	}
	m := make(map[string]string, len(a.vals))
	for i, k := range a.keys.names {
		m[k] = a.vals[i]
	}
	return m
}

// Equal reports whether a and b hold the same attributes, and are both
// nil or both not.
func (a Attributes) Equal(b Attributes) bool {
	if (a.keys == nil) != (b.keys == nil) || len(a.vals) != len(b.vals) {
		return false
	}
	return slices.Equal(a.vals, b.vals) && (a.keys == b.keys || a.keys.Equal(b.keys))
}

// Same reports whether a and b are one set in memory, keys and values:
// what the state store's sharing makes of equal attributes.
func (a Attributes) Same(b Attributes) bool {
	return a.keys == b.keys && len(a.vals) == len(b.vals) &&
		(len(a.vals) == 0 || &a.vals[0] == &b.vals[0])
}

// With returns a copy of a with k set to v; a itself is unchanged. The
// copy shares a's keys if a already has k. With on the nil set gives a
// set of one.
func (a Attributes) With(k, v string) Attributes {
	i := a.index(k)
	if i >= 0 {
		vals := slices.Clone(a.vals)
		vals[i] = v
		return Attributes{keys: a.keys, vals: vals}
	}
	var names []string
	if a.keys != nil {
		names = a.keys.names
	}
	at, _ := slices.BinarySearch(names, k)
	return Attributes{
		keys: &AttributeKeys{names: slices.Insert(slices.Clone(names), at, k)},
		vals: slices.Insert(slices.Clone(a.vals), at, v),
	}
}

// Without returns a copy of a without k; a itself if a has no k.
func (a Attributes) Without(k string) Attributes {
	i := a.index(k)
	if i < 0 {
		return a
	}
	if len(a.vals) == 1 {
		return Attributes{keys: emptyAttributeKeys}
	}
	return Attributes{
		keys: &AttributeKeys{names: slices.Delete(slices.Clone(a.keys.names), i, i+1)},
		vals: slices.Delete(slices.Clone(a.vals), i, i+1),
	}
}

// String shows the attributes as a map does with %v, so logs and test
// failures read as they did.
func (a Attributes) String() string {
	if a.keys == nil {
		return "map[]"
	}
	var b strings.Builder
	b.WriteString("map[")
	for i, k := range a.keys.names {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte(':')
		b.WriteString(a.vals[i])
	}
	b.WriteByte(']')
	return b.String()
}

// Keys returns a's key set, nil for the nil set.
func (a Attributes) Keys() *AttributeKeys { return a.keys }

// Len is the number of keys.
func (k *AttributeKeys) Len() int {
	if k == nil {
		return 0
	}
	return len(k.names)
}

// All yields the keys in order.
func (k *AttributeKeys) All() iter.Seq[string] {
	if k == nil {
		return func(func(string) bool) {}
	}
	return slices.Values(k.names)
}

// Equal reports whether k and o hold the same keys.
func (k *AttributeKeys) Equal(o *AttributeKeys) bool {
	return k == o || (k != nil && o != nil && slices.Equal(k.names, o.names))
}

// Shared returns a copy of k with each key replaced by what share returns
// for it, which must be an equal string (the state store's interner).
func (k *AttributeKeys) Shared(share func(string) string) *AttributeKeys {
	if k == nil {
		return nil
	}
	if len(k.names) == 0 {
		return emptyAttributeKeys
	}
	names := make([]string, len(k.names))
	for i, n := range k.names {
		names[i] = share(n)
	}
	return &AttributeKeys{names: names}
}

// Rekeyed returns a's attributes on keys, a key set equal to a's (the
// store's shared one), with each value replaced by what value returns for
// it, which must be an equal string (the store's interner). The values
// are a fresh slice; a itself is unchanged. If keys are not a's it
// returns a set on a's own keys, since a key set that differs would
// change the attributes.
func (a Attributes) Rekeyed(keys *AttributeKeys, value func(key, v string) string) Attributes {
	if a.keys == nil {
		return a
	}
	if !keys.Equal(a.keys) {
		keys = a.keys
	}
	if len(a.vals) == 0 {
		return Attributes{keys: emptyAttributeKeys}
	}
	vals := make([]string, len(a.vals))
	for i, v := range a.vals {
		vals[i] = value(keys.names[i], v)
	}
	return Attributes{keys: keys, vals: vals}
}
