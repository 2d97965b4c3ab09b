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
	each(limit int, try func(node *structs.Node, b *bucket) bool)
}

// ringSource offers the shuffled nodes round-robin, starting where the
// previous Select stopped, so consecutive placements look at different
// nodes (and an exhausted node is not re-checked first every time).
type ringSource struct {
	nodes []*structs.Node
	next  int
}

func (s *ringSource) each(limit int, try func(*structs.Node, *bucket) bool) {
	n := len(s.nodes)
	taken := 0
	for i := 0; i < n && taken < limit; i++ {
		node := s.nodes[s.next]
		s.next = (s.next + 1) % n
		if try(node, nil) {
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
	next     int

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
type bucketSource struct {
	buckets []*bucket
	spread  *spreadScorer
	group   *groupInfo
}

// newBucketSource groups the (already shuffled) nodes. Reading each node's
// attribute values and affinity happens here, once per SetNodes.
func newBucketSource(ctx *EvalContext, g *groupInfo, nodes []*structs.Node) *bucketSource {
	s := &bucketSource{group: g}
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
	s.spread = newSpreadScorer(g.spreads, seen)
	return s
}

// prepare scores every bucket for the coming Select.
func (s *bucketSource) prepare(t *jobTracker) {
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

func (s *bucketSource) each(limit int, try func(*structs.Node, *bucket) bool) {
	k := len(s.buckets)
	if k == 0 || limit <= 0 {
		return
	}
	per := (limit + min(k, limit) - 1) / min(k, limit)
	h := bucketHeap(append([]*bucket(nil), s.buckets...))
	heap.Init(&h)
	taken := 0
	for h.Len() > 0 && taken < limit {
		b := heap.Pop(&h).(*bucket)
		got := 0
		for i := 0; i < len(b.nodes) && got < per && taken < limit; i++ {
			node := b.nodes[b.next]
			b.next = (b.next + 1) % len(b.nodes)
			if try(node, b) {
				got++
				taken++
			}
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
