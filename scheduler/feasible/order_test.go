package feasible

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// A spread block keeps its least and most used counts as values move one
// at a time (order.go); they must always be what a recount finds.
func TestSpreadBlockKeepsItsLeastAndMostUsedCounts(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 8).Draw(rt, "values")
		b := &spreadBlock{counts: map[string]int{}}
		for i := 0; i < n; i++ {
			v := fmt.Sprintf("v%d", i)
			b.values = append(b.values, v)
			b.counts[v] = rapid.IntRange(0, 3).Draw(rt, "count")
		}
		b.recount()
		for step := rapid.IntRange(0, 40).Draw(rt, "steps"); step > 0; step-- {
			v := b.values[rapid.IntRange(0, n-1).Draw(rt, "value")]
			old := b.counts[v]
			d := 1
			if old > 0 && rapid.Bool().Draw(rt, "down") {
				d = -1
			}
			b.counts[v] = old + d
			b.move(old, old+d)
			want := &spreadBlock{values: b.values, counts: b.counts}
			want.recount()
			if b.min != want.min || b.max != want.max {
				rt.Fatalf("after %s %+d: min, max = %d, %d; a recount finds %d, %d", v, d, b.min, b.max, want.min, want.max)
			}
		}
	})
}
