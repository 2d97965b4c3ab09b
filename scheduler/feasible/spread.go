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

	// Kept from one Select to the next, so that prepare costs the
	// values whose count changed, not all of them (see prepare).
	tracker *jobTracker
	mark    int
	known   map[string]int // values' counts when last read
	freq    map[int]int    // how many values have each count
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
// tracker) before a Select. It returns whether every score may have
// changed (the first Select, a new snapshot, or a block's least or most
// used count moved), and otherwise, per block, the values whose count
// changed: only the nodes with those values score differently. fresh
// reads every count again, as the reference walk does (fullWalk).
func (s *spreadScorer) prepare(t *jobTracker, group string, fresh bool) (all bool, changed [][]string) {
	changed = make([][]string, len(s.blocks))
	for i, b := range s.blocks {
		b.counts = t.propertyCounts(b.attr, group)
		if b.tracker != t || fresh {
			b.tracker = t
			_, b.mark = t.propertyChanges(b.attr, group, 0)
			b.recount()
			all = true
			continue
		}
		var values []string
		values, b.mark = t.propertyChanges(b.attr, group, b.mark)
		if len(values) == 0 {
			continue
		}
		min, max := b.min, b.max
		for _, v := range values {
			old, ok := b.known[v]
			if !ok {
				continue // not a value of the candidate nodes
			}
			now := b.counts[v]
			if now == old {
				continue
			}
			b.known[v] = now
			b.move(old, now)
			changed[i] = append(changed[i], v)
		}
		if b.targets == nil && (b.min != min || b.max != max) {
			all = true
		}
	}
	return all, changed
}

// recount reads every value's count; without targets, the least and most
// used counts too.
func (b *spreadBlock) recount() {
	b.known = make(map[string]int, len(b.values))
	b.freq = map[int]int{}
	b.min, b.max = -1, 0
	for _, v := range b.values {
		c := b.counts[v]
		b.known[v] = c
		b.freq[c]++
		if b.min < 0 || c < b.min {
			b.min = c
		}
		if c > b.max {
			b.max = c
		}
	}
}

// move records that one value's count went from old to now, keeping the
// least and most used counts.
func (b *spreadBlock) move(old, now int) {
	if b.freq[old]--; b.freq[old] == 0 {
		delete(b.freq, old)
	}
	b.freq[now]++
	b.min, b.max = min(b.min, now), max(b.max, now)
	for b.freq[b.min] == 0 {
		b.min++
	}
	for b.freq[b.max] == 0 {
		b.max--
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
