package structs

import (
	"sort"
	"strings"
)

// closestKey returns the known key nearest to k by edit distance, if it
// is near enough to be the key meant: at most a third of the longer
// name's length, and at most 3 edits. Ties go to the first in order.
func closestKey(k string, known map[string]DriverConfigKey) string {
	best, bestD := "", -1
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		d := levenshtein(strings.ToLower(k), strings.ToLower(name))
		limit := max(len(k), len(name)) / 3
		if d <= min(max(limit, 1), 3) && (bestD < 0 || d < bestD) {
			best, bestD = name, d
		}
	}
	return best
}

// levenshtein is the edit distance between a and b: insertions,
// deletions and substitutions of bytes (config keys are ASCII), and
// swaps of two adjacent bytes, the commonest typo ("imgae" for "image"),
// each counted as one edit (the optimal string alignment distance).
func levenshtein(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
