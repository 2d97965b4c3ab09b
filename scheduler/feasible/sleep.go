package feasible

import (
	"github.com/drover-sched/drover/structs"
)

// Full nodes sleep: a node of a bucket on which the group did not fit on
// CPU, memory or disk, with the memo of full nodes holding that refusal
// (fit_memo.go), is taken out of the walk until the plan's entries for it
// change. Trying it again would give the same answer, and nothing else:
// it passed the checks before the fit when it was refused, and those that
// could change (distinct_hosts) look only at the job's allocations on the
// node, which only the plan's entries for it change. Spread needs this: a
// value whose nodes are full of other work keeps the best spread score
// (the group has nothing there), so every Select reaches its bucket first
// and used to try each of its nodes.
//
// Sleeping changes no placement and no metric. The walk still passes a
// sleeping node where it is in its bucket's ring and counts it as
// evaluated and exhausted, as trying it would, without the checks; a
// bucket whose nodes all sleep is counted at once, by class and dimension,
// and its ring is left where it was, where a walk through all of it would
// end. A Select that updates an allocation in place fits without the memo
// (its allocation's share is free), so it tries every node itself. Groups
// with a distinct_property constraint do not sleep nodes: that check
// depends on the job's allocations everywhere.

// sleeper is where a sleeping node is.
type sleeper struct {
	b  *bucket
	at int
}

// exhaustKey is a sleeping node's class and the dimension it is full on.
type exhaustKey struct{ class, dim string }

// startSleeping readies the source for sleeping nodes, when its group
// allows it (see above).
func (s *bucketSource) startSleeping() {
	if s.fullWalk || s.group.noMemo {
		return
	}
	for _, c := range s.group.checkers[s.group.static:] {
		if _, ok := c.(distinctHostsChecker); !ok {
			return
		}
	}
	s.sleeping = map[string]sleeper{}
	s.sleepState = s.ctx.state
	_, s.planMark = s.ctx.plan.TouchedSince(0)
}

// sleep takes node at of bucket b out of the walk.
func (s *bucketSource) sleep(b *bucket, at int, dim string) {
	if s.sleeping == nil || s.ctx.state != s.sleepState {
		return
	}
	node := b.nodes[at]
	if _, ok := s.sleeping[node.ID]; ok {
		// Already asleep, or the same node listed twice: one entry per
		// node is all wakeTouched can wake.
		return
	}
	if b.asleep == nil {
		b.asleep = make([]string, len(b.nodes))
		b.sleepers = map[exhaustKey]int{}
	}
	b.asleep[at] = dim
	b.sleepers[exhaustKey{class: node.ComputedClass, dim: dim}]++
	b.nAsleep++
	s.sleeping[node.ID] = sleeper{b: b, at: at}
}

// wakeTouched puts back in the walk the sleeping nodes whose entries the
// plan changed since the last Select, and every node if the snapshot
// changed (the memo does not outlive it).
func (s *bucketSource) wakeTouched() {
	if s.sleeping == nil {
		return
	}
	if s.ctx.state != s.sleepState {
		for id, sl := range s.sleeping {
			s.wake(id, sl)
		}
		s.sleepState = s.ctx.state
	}
	var touched []string
	touched, s.planMark = s.ctx.plan.TouchedSince(s.planMark)
	if len(s.sleeping) == 0 {
		return
	}
	for _, id := range touched {
		if sl, ok := s.sleeping[id]; ok {
			s.wake(id, sl)
		}
	}
}

func (s *bucketSource) wake(id string, sl sleeper) {
	b := sl.b
	k := exhaustKey{class: b.nodes[sl.at].ComputedClass, dim: b.asleep[sl.at]}
	if b.sleepers[k]--; b.sleepers[k] == 0 {
		delete(b.sleepers, k)
	}
	b.asleep[sl.at] = ""
	b.nAsleep--
	delete(s.sleeping, id)
}

// countSleepers adds what trying each of the bucket's nodes would have
// added to the metrics: all are asleep.
func (b *bucket) countSleepers(m *structs.AllocMetric) {
	for k, n := range b.sleepers {
		m.NodesEvaluated += n
		m.NodesExhausted += n
		if k.class != "" {
			if m.ClassExhausted == nil {
				m.ClassExhausted = map[string]int{}
			}
			m.ClassExhausted[k.class] += n
		}
		if k.dim != "" {
			if m.DimensionExhausted == nil {
				m.DimensionExhausted = map[string]int{}
			}
			m.DimensionExhausted[k.dim] += n
		}
	}
}
