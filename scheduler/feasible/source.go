package feasible

import (
	"strconv"

	"github.com/drover-sched/drover/structs"
)

// A candidate source hands nodes to try, in the order they should be tried,
// until try has counted limit of them or every node was offered once. b is
// the node's bucket (nil for the ring source): its static scores apply to
// the node. checked says the node is known to pass the group's static
// checks (groupInfo.static), so try runs only the checks after them.
type candidateSource interface {
	each(limit int, try tryFunc)
}

type tryFunc func(node *structs.Node, b *bucket, checked bool) outcome

// outcome is what trying one node came to.
type outcome struct {
	// counted: the node counts toward the candidate limit.
	counted bool
	// full names the dimension the group did not fit on, when the memo
	// of full nodes holds the refusal: trying the node again gives the
	// same answer until the plan's entries for it change (sleep.go).
	full string
}

// ringSource offers the shuffled nodes round-robin, starting where the
// previous Select stopped, so consecutive placements look at different
// nodes (and an exhausted node is not re-checked first every time).
type ringSource struct {
	nodes []*structs.Node
	next  int
}

func (s *ringSource) each(limit int, try tryFunc) {
	n := len(s.nodes)
	taken := 0
	for i := 0; i < n && taken < limit; i++ {
		node := s.nodes[s.next]
		s.next = (s.next + 1) % n
		if try(node, nil, false).counted {
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
	// feasible counts the nodes that pass the static checks (all of
	// nodes, unless the source walks everything: fullWalk).
	feasible int
	// asleep holds, per node, the dimension it is full on while it is
	// out of the walk ("" for a node in it), and sleepers counts those
	// nodes by class and dimension (sleep.go).
	asleep   []string
	sleepers map[exhaustKey]int
	nAsleep  int

	// static is the spread plus affinity score, per Select.
	static float64
	spread float64
	order  int
	// at is the bucket's index in its source's heap.
	at int
}

// bucketSource offers nodes bucket by bucket, most wanted bucket first
// (highest spread plus affinity score, ties in shuffled order), a few from
// each, round-robin inside a bucket. Spread then costs a score per bucket
// per Select (tens of values) instead of a score per node, and a placement
// still looks at about limit nodes, as under binpack.
//
// Nodes that a check whose verdict cannot change during the evaluation
// refuses (status, drivers, constraints: groupInfo.static) are left out
// of the buckets when they are built, once per SetNodes, and a value
// without any node left is not a value the group spreads over: it takes
// no share of the untargeted percent and is not the "least used" value of
// an even spread. Were they kept, a value that a constraint rules out
// would keep the best spread score (nothing is ever placed there), and
// every Select would walk all its nodes before reaching a bucket that can
// take the placement: a pass over a large part of the fleet per placement.
// Leaving them out keeps the order of the other nodes, so the placements
// are exactly those of a source that walks every node every time
// (fullWalk, kept for the equivalence test).
type bucketSource struct {
	buckets []*bucket
	spread  *spreadScorer
	group   *groupInfo
	// live is how many buckets have a feasible node; it sizes the share
	// of the candidate limit each bucket gets.
	live int
	// order holds the buckets as a heap, most wanted first, kept from one
	// Select to the next; byValue finds, per spread block, the buckets of
	// a value, to rescore those whose count changed (order.go).
	order   bucketHeap
	byValue []map[string][]*bucket

	// leftOut counts the nodes left out, by class and reason. A Select
	// that fails adds them to its metrics, so that they explain every
	// node, as they would had it walked them all.
	leftOut  map[leftOutKey]int
	fullWalk bool

	// Full nodes out of the walk until the plan touches them (sleep.go).
	ctx        *EvalContext
	sleeping   map[string]sleeper
	sleepState State
	planMark   int
	// awake is set for a Select that must try every node itself: one
	// that updates an allocation in place fits without the memo.
	awake bool
}

type leftOutKey struct{ class, reason string }

// newBucketSource groups the (already shuffled) nodes. Reading each node's
// attribute values and affinity, and the static checks, happen here, once
// per SetNodes. fullWalk keeps the nodes the static checks refuse.
func newBucketSource(ctx *EvalContext, g *groupInfo, nodes []*structs.Node, fullWalk bool) *bucketSource {
	s := &bucketSource{group: g, leftOut: map[leftOutKey]int{}, fullWalk: fullWalk, ctx: ctx}
	s.startSleeping()
	seen := make([]map[string]struct{}, len(g.spreads))
	for i := range seen {
		seen[i] = map[string]struct{}{}
	}
	byKey := map[string]*bucket{}
	var all []*bucket
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
		// A bucket is created at its first node, feasible or not, so
		// that the buckets' order (which breaks ties) is the same with
		// and without fullWalk.
		b := byKey[string(key)]
		if b == nil {
			b = &bucket{
				values: append([]string(nil), values...), found: append([]bool(nil), found...),
				affinity: aff, order: len(byKey),
			}
			byKey[string(key)] = b
			all = append(all, b)
		}
		if reason := g.staticReason(node); reason != "" {
			if fullWalk {
				b.nodes = append(b.nodes, node)
			} else {
				s.leftOut[leftOutKey{class: node.ComputedClass, reason: reason}]++
			}
			continue
		}
		b.nodes = append(b.nodes, node)
		b.feasible++
		if b.feasible == 1 {
			s.live++
			for i := range values {
				if found[i] {
					seen[i][values[i]] = struct{}{}
				}
			}
		}
	}
	for _, b := range all {
		if len(b.nodes) > 0 {
			s.buckets = append(s.buckets, b)
		}
	}
	s.spread = newSpreadScorer(g.spreads, seen)
	return s
}

// explainLeftOut adds the nodes left out by the static checks to a failed
// Select's metrics, as evaluated and filtered for the reason they were
// refused.
func (s *bucketSource) explainLeftOut(m *structs.AllocMetric) {
	for k, n := range s.leftOut {
		for i := 0; i < n; i++ {
			m.EvaluateNode()
			m.FilterNode(k.class, k.reason)
		}
	}
}

// prepare wakes the sleeping nodes the plan touched and scores the
// buckets for the coming Select (order.go); inPlace says the Select
// updates an allocation in place, and tries every node itself.
func (s *bucketSource) prepare(t *jobTracker, inPlace bool) {
	s.wakeTouched()
	s.awake = inPlace || s.fullWalk
	s.rescore(t)
}

func (s *bucketSource) each(limit int, try tryFunc) {
	// Buckets without a feasible node (kept by fullWalk only) do not
	// count, so that the share is the same with and without fullWalk;
	// when none has one, fullWalk still walks them all.
	k := s.live
	if k == 0 {
		k = len(s.buckets)
	}
	if k == 0 || limit <= 0 {
		return
	}
	per := (limit + min(k, limit) - 1) / min(k, limit)
	taken := 0
	m := s.ctx.metrics
	s.inOrder(func(b *bucket) bool {
		if !s.awake && b.nAsleep == len(b.nodes) {
			// Every node would be tried and refused, and the walk
			// would end where it started.
			b.countSleepers(m)
			return taken < limit
		}
		got := 0
		for i := 0; i < len(b.nodes) && got < per && taken < limit; i++ {
			at := b.next
			node := b.nodes[at]
			b.next = (b.next + 1) % len(b.nodes)
			if !s.awake && b.nAsleep > 0 && b.asleep[at] != "" {
				m.EvaluateNode()
				m.ExhaustedNode(node.ComputedClass, b.asleep[at])
				continue
			}
			o := try(node, b, !s.fullWalk)
			if o.counted {
				got++
				taken++
			} else if o.full != "" && !s.awake {
				s.sleep(b, at, o.full)
			}
		}
		return taken < limit
	})
}
