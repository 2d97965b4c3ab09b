package iradix

import "sync/atomic"

// This file is Drover's change to go-immutable-radix v1.3.1 (see README.md):
// the mutation channel of a Node or leafNode is made when someone first asks
// to watch it, not when the node is made.
//
// Upstream gives every node and every leaf its own channel at birth, a 96-byte
// runtime channel each, so an index entry costs about two channels whether or
// not anything ever watches it, and almost nothing does: a blocking query
// watches a handful of prefixes and leaves of the snapshot it read. A
// watchSlot holds no channel until watch is called, and the upstream
// semantics are kept exactly:
//
//   - watch returns the node's channel, making it if the slot is empty; two
//     racing callers agree on one channel (a compare-and-swap; the loser takes
//     the winner's).
//   - A transaction with TrackMutate tracks the slots of the nodes and leaves
//     it replaces (not their channels, which may not exist yet), and Notify
//     fires each tracked slot: it swaps in closedCh, a channel closed once for
//     the whole process, and closes the channel that was there, if any. So a
//     watch taken before the commit fires at Notify, a watch taken between the
//     write and Notify fires at Notify (its channel is in the slot by then, or
//     it lost the race and got closedCh), and a watch taken later still, on a
//     stale snapshot's node, gets closedCh and fires at once, as the closed
//     channel upstream would have.
//   - Without TrackMutate, or without Notify (an aborted transaction), nothing
//     is fired, as upstream.

// closedCh is the channel every fired slot holds: closed at init, so a
// receive on it returns at once. Firing a slot stores closedChPtr; a slot
// holding it is never closed again.
var closedCh = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

var closedChPtr = &closedCh

// watchSlot is the lazily made mutation channel of a Node or leafNode. Its
// zero value is an empty slot; it must not be copied once in use (it is only
// ever reached through its node's pointer).
type watchSlot struct {
	ch atomic.Pointer[chan struct{}]
}

// watch returns the slot's channel, which is closed once the node has been
// replaced by a committed, tracked transaction. It makes the channel on the
// first call.
func (s *watchSlot) watch() chan struct{} {
	if p := s.ch.Load(); p != nil {
		return *p
	}
	ch := make(chan struct{})
	if s.ch.CompareAndSwap(nil, &ch) {
		return ch
	}
	// Another watcher made one first, or Notify fired the slot: either way
	// the slot now holds the channel everyone must share.
	return *s.ch.Load()
}

// fire closes the slot's channel for good: the slot holds closedCh from now
// on, and the channel a watcher made before (if any) is closed. Firing a slot
// twice is harmless.
func (s *watchSlot) fire() {
	old := s.ch.Swap(closedChPtr)
	if old != nil && old != closedChPtr {
		close(*old)
	}
}
