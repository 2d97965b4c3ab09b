package broker

import "slices"

// maxNodeUnblockIndexes bounds BlockedEvals.nodeIndex. Without a bound the
// map keeps an entry for every node that ever changed, for as long as the
// server leads: about 40 bytes per node of a fleet, though the entries are
// read only for evals that name a node, and only to compare with their
// snapshot index.
const maxNodeUnblockIndexes = 1024

// nodeUnblockIndexLocked is the highest index at which nodeID's capacity
// may have changed, as far as the missed-unblock check needs to know: the
// node's own entry, or the floor below which entries were forgotten. The
// floor can only make the answer higher than the truth, so an eval whose
// snapshot is older than the floor is enqueued again rather than parked
// (a wasted scheduler run, never a missed unblock).
func (b *BlockedEvals) nodeUnblockIndexLocked(nodeID string) uint64 {
	return max(b.nodeIndex[nodeID], b.nodeIndexFloor)
}

// recordNodeUnblockLocked notes that nodeID changed at index, and when the
// map is full forgets its older half, raising the floor to the newest
// index forgotten.
func (b *BlockedEvals) recordNodeUnblockLocked(nodeID string, index uint64) {
	if index <= b.nodeUnblockIndexLocked(nodeID) {
		return
	}
	b.nodeIndex[nodeID] = index
	if len(b.nodeIndex) <= maxNodeUnblockIndexes {
		return
	}
	indexes := make([]uint64, 0, len(b.nodeIndex))
	for _, i := range b.nodeIndex {
		indexes = append(indexes, i)
	}
	slices.Sort(indexes)
	cutoff := indexes[len(indexes)/2]
	for id, i := range b.nodeIndex {
		if i <= cutoff {
			delete(b.nodeIndex, id)
		}
	}
	b.nodeIndexFloor = max(b.nodeIndexFloor, cutoff)
}
