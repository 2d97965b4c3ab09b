package broker

import (
	"container/heap"

	"github.com/drover-sched/drover/structs"
)

// evalHeap is a priority queue of evals under one ordering.
type evalHeap struct {
	items []heapItem
	less  func(a, b *structs.Evaluation) bool
}

type heapItem struct {
	eval *structs.Evaluation
	seq  uint64
}

func newEvalHeap(less func(a, b *structs.Evaluation) bool) *evalHeap {
	return &evalHeap{less: less}
}

func (h *evalHeap) Len() int { return len(h.items) }
func (h *evalHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	if h.less(a.eval, b.eval) {
		return true
	}
	if h.less(b.eval, a.eval) {
		return false
	}
	return a.seq < b.seq
}
func (h *evalHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *evalHeap) Push(x any)    { h.items = append(h.items, x.(heapItem)) }
func (h *evalHeap) Pop() any {
	it := h.items[len(h.items)-1]
	h.items[len(h.items)-1] = heapItem{}
	h.items = h.items[:len(h.items)-1]
	return it
}

func (h *evalHeap) push(e *structs.Evaluation, seq uint64) { heap.Push(h, heapItem{eval: e, seq: seq}) }
func (h *evalHeap) pop() *structs.Evaluation               { return heap.Pop(h).(heapItem).eval }
func (h *evalHeap) peek() *structs.Evaluation              { return h.items[0].eval }

// readyOrder runs higher priority first, then older evals.
func readyOrder(a, b *structs.Evaluation) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.CreateIndex < b.CreateIndex
}

// newestFirst orders a job's waiting evals: the most recently written one
// reflects the newest job and cluster state, so it is the one worth running.
func newestFirst(a, b *structs.Evaluation) bool {
	if a.ModifyIndex != b.ModifyIndex {
		return a.ModifyIndex > b.ModifyIndex
	}
	if a.CreateIndex != b.CreateIndex {
		return a.CreateIndex > b.CreateIndex
	}
	return a.Priority > b.Priority
}

// delayOrder releases the earliest WaitUntil first.
func delayOrder(a, b *structs.Evaluation) bool {
	if !a.WaitUntil.Equal(b.WaitUntil) {
		return a.WaitUntil.Before(b.WaitUntil)
	}
	return a.CreateIndex < b.CreateIndex
}
