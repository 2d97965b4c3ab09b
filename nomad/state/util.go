package state

import (
	"sort"

	memdb "github.com/hashicorp/go-memdb"
)

// appendAll appends every object of iter to out, in the iterator's order.
// Each object must be a T.
func appendAll[T any](out []T, iter memdb.ResultIterator) []T {
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		out = append(out, raw.(T))
	}
	return out
}

// sortedKeys returns a map's keys in order, so that writes driven by a map
// happen in the same order on every server.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
