package drainer

import (
	"fmt"
	"testing"
)

// BenchmarkPlan is one pass over a draining node that runs part of a large
// group: the pass reads every alloc of the group's job, so its cost grows
// with the job, and a pass runs on every change to what it read.
func BenchmarkPlan(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("allocs=%d", n), func(b *testing.B) {
			w := newWorld(b)
			w.node("n1", hour())
			w.node("n2", nil)
			j := w.job("web", "service", n, 10)
			for i := 0; i < n; i++ {
				node := "n2"
				if i%10 == 0 {
					node = "n1"
				}
				w.alloc(j, node, yes)
			}
			w.plan(t0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Plan(w.st, nil, t0, func() string { return "e" }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
