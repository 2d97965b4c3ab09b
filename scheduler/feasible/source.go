package feasible

import (
	"container/heap"
	"strconv"

	"github.com/drover-sched/drover/structs"
)

// A candidate source hands nodes to try, in the order they should be tried,
// until try has accepted limit of them or every node was offered once. b is
// the node's bucket (nil for the ring source): its static scores apply to
// the node.
type candidateSource interface {
	each(limit int, try func(node *structs.Node, b *bucket) verdict)
}

// verdict is what trying one node tells the source.
type verdict struct {
	// taken says the node counts toward the candidate limit.
	taken bool
	// infeasible, when set, is the reason a check that cannot change
	// during the evaluation refused the node (groupInfo.static): trying
	// it again would only refuse it again.
	infeasible string
}

// ringSource offers the shuffled nodes round-robin, starting where the
// previous Select stopped, so consecutive placements look at different
// nodes (and an exhausted node is not re-checked first every time).
type ringSource struct {
	nodes []*structs.Node
	next  int
}

func (s *ringSource) each(limit int, try func(*structs.Node, *bucket) verdict) {
	n := len(s.nodes)
	taken := 0
	for i := 0; i < n && taken < limit; i++ {
		node := s.nodes[s.next]
		s.next = (s.next + 1) % n
		if try(node, nil).taken {
			taken++
		}
	}
}

// bucket holds the nodes that share the values of every spread attribute
// and the same affinity score: nodes that spread and affinity cannot tell
// apart. Only fitness and anti-affinity differ inside a bucket.
type bucket struct {
	values   []string
	found    []bool
	affinity float64
	nodes    []*structs.Node
	// The nodes form a ring in shuffled order: succ[i] is the node after
	// nodes[i]. prev is the node before the next one to offer, so that
	// the next one can be unlinked in O(1) when it turns out infeasible;
	// live counts the nodes still linked.
	succ []int32
	prev int32
	live int

	// static is the spread plus affinity score, per Select.
	static float64
	spread float64
	order  int
}

// bucketSource offers nodes bucket by bucket, most wanted bucket first
// (highest spread plus affinity score, ties in shuffled order), a few from
// each, round-robin inside a bucket. Spread then costs a score per bucket
// per Select (tens of values) instead of a score per node, and a placement
// still looks at about limit nodes, as under binpack.
//
// A node refused by a check that cannot change during the evaluation
// (status, drivers, constraints: groupInfo.static) is unlinked from its
// bucket, so no later Select of the evaluation looks at it again. Without
// that, a value that a constraint rules out keeps the best spread score
// (nothing is ever placed there), and every Select walked all its nodes
// before reaching a feasible bucket: a pass over a large part of the fleet
// per placement. Unlinking keeps the order in which the remaining nodes
// are offered, so the placements are exactly those of a source that walks
// every node every time (fullWalk, kept for the equivalence test).
type bucketSource struct {
	buckets []*bucket
	spread  *spreadScorer
	group   *groupInfo

	// fullWalk turns unlinking off: every Select walks every node again.
	fullWalk bool
	// pruned counts the nodes unlinked by earlier Selects, by class and
	// reason, and fresh those unlinked by the current one. A Select that
	// fails adds pruned to its metrics, so that they explain every node,
	// as they would had it walked them all.
	pruned, fresh map[prunedKey]int
}

type prunedKey struct{ class, reason string }

// newBucketSource groups the (already shuffled) nodes. Reading each node's
// attribute values and affinity happens here, once per SetNodes.
func newBucketSource(ctx *EvalContext, g *groupInfo, nodes []*structs.Node) *bucketSource {
	s := &bucketSource{group: g, pruned: map[prunedKey]int{}, fresh: map[prunedKey]int{}}
	seen := make([]map[string]struct{}, len(g.spreads))
	for i := range seen {
		seen[i] = map[string]struct{}{}
	}
	byKey := map[string]*bucket{}
	values := make([]string, len(g.spreads))
	found := make([]bool, len(g.spreads))
	var key []byte
	for _, node := range nodes {
		key = key[:0]
		for i, sp := range g.spreads {
			values[i], found[i] = resolveTarget(sp.Attribute, node)
			if found[i] {
				// Length-prefixed, so no value can imitate two.
				key = strconv.AppendInt(key, int64(len(values[i])), 10)
				key = append(key, ':')
				key = append(key, values[i]...)
			} else {
				key = append(key, '-')
			}
		}
		aff := 0.0
		if len(g.affinities) > 0 {
			aff = affinityScore(ctx, g.affinities, node)
			key = strconv.AppendFloat(append(key, '|'), aff, 'g', -1, 64)
		}
		b := byKey[string(key)]
		if b == nil {
			b = &bucket{
				values: append([]string(nil), values...), found: append([]bool(nil), found...),
				affinity: aff, order: len(s.buckets),
			}
			byKey[string(key)] = b
			s.buckets = append(s.buckets, b)
			for i := range values {
				if found[i] {
					seen[i][values[i]] = struct{}{}
				}
			}
		}
		b.nodes = append(b.nodes, node)
	}
	for _, b := range s.buckets {
		n := len(b.nodes)
		b.succ = make([]int32, n)
		for i := range b.succ {
			b.succ[i] = int32((i + 1) % n)
		}
		b.prev, b.live = int32(n-1), n
	}
	s.spread = newSpreadScorer(g.spreads, seen)
	return s
}

// prepare scores every bucket for the coming Select.
func (s *bucketSource) prepare(t *jobTracker) {
	for k, n := range s.fresh {
		s.pruned[k] += n
		delete(s.fresh, k)
	}
	s.spread.prepare(t, s.group.tg.Name)
	desired := s.group.desiredCount()
	for _, b := range s.buckets {
		b.spread = 0
		if len(s.group.spreads) > 0 {
			b.spread = s.spread.score(b.values, b.found, desired)
		}
		b.static = b.spread + b.affinity
	}
}

func (s *bucketSource) each(limit int, try func(*structs.Node, *bucket) verdict) {
	if limit <= 0 {
		return
	}
	// per counts every bucket, emptied ones too, so that the nodes offered
	// do not depend on how many buckets unlinking has emptied.
	k := len(s.buckets)
	if k == 0 {
		return
	}
	per := (limit + min(k, limit) - 1) / min(k, limit)
	h := make(bucketHeap, 0, k)
	for _, b := range s.buckets {
		if b.live > 0 {
			h = append(h, b)
		}
	}
	heap.Init(&h)
	taken := 0
	for h.Len() > 0 && taken < limit {
		b := heap.Pop(&h).(*bucket)
		got := 0
		for left := b.live; left > 0 && got < per && taken < limit; left-- {
			i := b.succ[b.prev]
			node := b.nodes[i]
			v := try(node, b)
			switch {
			case v.infeasible != "" && !s.fullWalk:
				s.unlink(b, node, v.infeasible)
			default:
				b.prev = i
			}
			if v.taken {
				got++
				taken++
			}
		}
	}
}

// unlink removes the bucket's next node from its ring, remembering why.
func (s *bucketSource) unlink(b *bucket, node *structs.Node, reason string) {
	b.succ[b.prev] = b.succ[b.succ[b.prev]]
	b.live--
	s.fresh[prunedKey{class: node.ComputedClass, reason: reason}]++
}

// explainPruned adds the nodes unlinked by earlier Selects to a failed
// Select's metrics, as evaluated and filtered for the reason they were
// refused.
func (s *bucketSource) explainPruned(m *structs.AllocMetric) {
	for k, n := range s.pruned {
		for i := 0; i < n; i++ {
			m.EvaluateNode()
			m.FilterNode(k.class, k.reason)
		}
	}
}

// bucketHeap pops the highest static score first, then the earliest bucket
// in shuffled order, so ties break the same way for the same seed.
type bucketHeap []*bucket

func (h bucketHeap) Len() int { return len(h) }
func (h bucketHeap) Less(i, j int) bool {
	if h[i].static != h[j].static {
		return h[i].static > h[j].static
	}
	return h[i].order < h[j].order
}
func (h bucketHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *bucketHeap) Push(x any)   { *h = append(*h, x.(*bucket)) }
func (h *bucketHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	*h = old[:len(old)-1]
	return b
}
