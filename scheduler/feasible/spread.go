package feasible

import (
	"github.com/drover-sched/drover/structs"
)

// spreadScorer scores attribute values for a group's spread blocks (the
// job's and the group's). A score is per value, not per node: every node
// with the same values scores the same, which is what lets the bucketed
// source score ten datacenters instead of five thousand nodes.
//
// The values are those of the candidate nodes that pass the static checks
// (bucketSource): a value no such node has is not one the group can be
// spread over.
//
// With targets, a value whose count is still below its share (percent of
// the group's count) scores between 0.5 and 1, and a value at or over its
// share between -0.5 and -1, less the further the placement would
// overshoot; the gap of at least 1 keeps fitness and anti-affinity, each
// within 0..1, from overriding a target. Values without a target share
// what the targets leave of 100% evenly. Without targets, the least used
// values score 1 and the most used -1. A node without the attribute scores
// -1 on that block.
type spreadScorer struct {
	blocks []*spreadBlock
	weight float64
}

type spreadBlock struct {
	attr    string
	weight  float64
	targets map[string]float64 // value -> percent
	// rest is the percent left for values without a target, shared by
	// untargeted, the number of such values among the nodes.
	rest       float64
	untargeted int
	values     []string // distinct values among the candidate nodes

	// Per Select.
	counts   map[string]int
	min, max int
}

// newSpreadScorer prepares the blocks for the values seen among the nodes
// (one string per block and node, with found flags).
func newSpreadScorer(spreads []*structs.Spread, seen []map[string]struct{}) *spreadScorer {
	s := &spreadScorer{}
	for i, sp := range spreads {
		b := &spreadBlock{attr: sp.Attribute, weight: float64(sp.Weight)}
		if b.weight <= 0 {
			b.weight = 1
		}
		if len(sp.SpreadTarget) > 0 {
			b.targets = map[string]float64{}
			sum := 0.0
			for _, t := range sp.SpreadTarget {
				b.targets[t.Value] = float64(t.Percent)
				sum += float64(t.Percent)
			}
			if sum < 100 {
				b.rest = 100 - sum
			}
		}
		for v := range seen[i] {
			b.values = append(b.values, v)
			if b.targets != nil {
				if _, ok := b.targets[v]; !ok {
					b.untargeted++
				}
			}
		}
		s.blocks = append(s.blocks, b)
		s.weight += b.weight
	}
	return s
}

// prepare reads the current counts (kept incrementally by the job
// tracker) before a Select.
func (s *spreadScorer) prepare(t *jobTracker, group string) {
	for _, b := range s.blocks {
		b.counts = t.propertyCounts(b.attr, group)
		if b.targets != nil {
			continue
		}
		b.min, b.max = -1, 0
		for _, v := range b.values {
			c := b.counts[v]
			if b.min < 0 || c < b.min {
				b.min = c
			}
			if c > b.max {
				b.max = c
			}
		}
	}
}

// score combines the blocks' scores for one node's values, weighted.
func (s *spreadScorer) score(values []string, found []bool, desired int) float64 {
	if s.weight == 0 {
		return 0
	}
	var total float64
	for i, b := range s.blocks {
		total += b.weight * b.score(values[i], found[i], desired)
	}
	return total / s.weight
}

func (b *spreadBlock) score(value string, found bool, desired int) float64 {
	if !found {
		return -1
	}
	used := float64(b.counts[value])
	if b.targets == nil {
		if b.max == b.min {
			return 0
		}
		// Clamped: a value none of the candidate nodes can take (a
		// preferred node from elsewhere) may lie outside min..max.
		return max(-1, min(1, 1-2*(used-float64(b.min))/float64(b.max-b.min)))
	}
	pct, ok := b.targets[value]
	if !ok {
		if b.untargeted == 0 {
			return -1
		}
		pct = b.rest / float64(b.untargeted)
	}
	want := pct / 100 * float64(desired)
	if want <= 0 {
		return -1
	}
	if used+1 <= want {
		// Room left: the emptier relative to its share, the better.
		return 0.5 + 0.5*(want-used)/want
	}
	// At or over its share: the less the placement would overshoot, the
	// better, in allocations rather than relative to the share, so that a
	// value whose share is below one allocation (10% of five) still comes
	// before a value already past a larger share.
	over := used + 1 - want
	return -0.5 - 0.5*over/(over+1)
}
