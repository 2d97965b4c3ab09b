package reconciler

import (
	"github.com/drover-sched/drover/structs"
)

// freeIndexes returns the n lowest name indexes not in used: a scale up
// reuses the names a scale down or a failure left free, so a group of count
// N is always named [0, N) when it is healthy.
func freeIndexes(used map[int]bool, n int) []int {
	out := make([]int, 0, max(n, 0))
	for i := 0; len(out) < n; i++ {
		if !used[i] {
			out = append(out, i)
		}
	}
	return out
}

// allocName names index i of the group.
func allocName(job *structs.Job, group string, i int) string {
	return structs.AllocName(job.ID, group, i)
}

// concat joins lists into a new one, in order, leaving each list as it was.
func concat[T any](lists ...[]T) []T {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if n == 0 {
		return nil
	}
	out := make([]T, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
