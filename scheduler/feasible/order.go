package feasible

import (
	"container/heap"
)

// The buckets' order, kept from one Select to the next. A Select visits
// the buckets most wanted first (highest spread plus affinity score, ties
// in shuffled order), but usually only the first few: about limit of them.
// Scoring and sorting every bucket at every Select cost a pass over the
// buckets, which is a pass over the nodes when a group spreads over a value
// per node (${node.unique.id}). So the buckets stay in a heap, a placement
// rescores only the buckets of the values whose count it changed and fixes
// their places, and a Select reads the heap in order without taking it
// apart (inOrder), at a cost of the buckets it visits. When the least or
// most used count of a spread block without targets moves, every score of
// that block moves, and every bucket is rescored and the heap rebuilt, as
// before; with many values that is rare (the least used count stays 0
// until every value has an allocation).
//
// The order is total (the shuffled order breaks ties), so the buckets come
// in the same sequence however the heap is laid out: the same as sorting
// them afresh, which the reference walk (fullWalk) does at every Select.

// rescore brings the buckets' scores and order up to date for a Select.
func (s *bucketSource) rescore(t *jobTracker) {
	all := s.order == nil || s.fullWalk
	var changed [][]string
	if len(s.group.spreads) > 0 {
		var moved bool
		moved, changed = s.spread.prepare(t, s.group.tg.Name, s.fullWalk)
		all = all || moved
	}
	desired := s.group.desiredCount()
	if all {
		s.order = append(s.order[:0], s.buckets...)
		for i, b := range s.order {
			s.score(b, desired)
			b.at = i
		}
		heap.Init(&s.order)
		return
	}
	if s.byValue == nil {
		s.indexValues()
	}
	for i, values := range changed {
		for _, v := range values {
			for _, b := range s.byValue[i][v] {
				s.score(b, desired)
				heap.Fix(&s.order, b.at)
			}
		}
	}
}

func (s *bucketSource) score(b *bucket, desired int) {
	b.spread = 0
	if len(s.group.spreads) > 0 {
		b.spread = s.spread.score(b.values, b.found, desired)
	}
	b.static = b.spread + b.affinity
}

// indexValues builds byValue: per spread block, the buckets of each value.
func (s *bucketSource) indexValues() {
	s.byValue = make([]map[string][]*bucket, len(s.group.spreads))
	for i := range s.byValue {
		s.byValue[i] = map[string][]*bucket{}
	}
	for _, b := range s.buckets {
		for i, v := range b.values {
			if b.found[i] {
				s.byValue[i][v] = append(s.byValue[i][v], b)
			}
		}
	}
}

// inOrder calls fn with the buckets, most wanted first, until fn returns
// false or every bucket was offered. It reads the heap without changing
// it: a small heap of the candidates for the next place (the children of
// the buckets offered so far) costs log of the buckets offered per bucket.
func (s *bucketSource) inOrder(fn func(*bucket) bool) {
	h := s.order
	if len(h) == 0 {
		return
	}
	next := frontier{h: h, at: []int{0}}
	for len(next.at) > 0 {
		i := heap.Pop(&next).(int)
		if !fn(h[i]) {
			return
		}
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(h) {
				heap.Push(&next, c)
			}
		}
	}
}

// frontier is a heap of positions in a bucketHeap, ordered as their
// buckets are.
type frontier struct {
	h  bucketHeap
	at []int
}

func (f frontier) Len() int           { return len(f.at) }
func (f frontier) Less(i, j int) bool { return f.h.Less(f.at[i], f.at[j]) }
func (f frontier) Swap(i, j int)      { f.at[i], f.at[j] = f.at[j], f.at[i] }
func (f *frontier) Push(x any)        { f.at = append(f.at, x.(int)) }
func (f *frontier) Pop() any {
	old := f.at
	i := old[len(old)-1]
	f.at = old[:len(old)-1]
	return i
}

// bucketHeap pops the highest static score first, then the earliest bucket
// in shuffled order, so ties break the same way for the same seed. Each
// bucket knows its place (bucket.at), for heap.Fix.
type bucketHeap []*bucket

func (h bucketHeap) Len() int { return len(h) }
func (h bucketHeap) Less(i, j int) bool {
	if h[i].static != h[j].static {
		return h[i].static > h[j].static
	}
	return h[i].order < h[j].order
}
func (h bucketHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].at, h[j].at = i, j
}
func (h *bucketHeap) Push(x any) {
	b := x.(*bucket)
	b.at = len(*h)
	*h = append(*h, b)
}
func (h *bucketHeap) Pop() any {
	old := *h
	b := old[len(old)-1]
	*h = old[:len(old)-1]
	return b
}
