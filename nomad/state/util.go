package state

import "sort"

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
