package reconciler

import "github.com/drover-sched/drover/structs"

// nodeClaims records, for one group of a system job, which nodes already
// have the group's alloc. The first alloc to claim a node keeps it; a later
// live one there is a duplicate and is stopped.
type nodeClaims struct {
	// held marks the nodes that have the group's alloc, or where a sysbatch
	// alloc of the current version finished and is not run again.
	held map[string]bool
	// kept are the allocs that keep their node, in the order they claimed it.
	kept []*structs.Allocation
	// running are the kept allocs that run, which a job update applies to.
	running []*structs.Allocation
}

func newNodeClaims() *nodeClaims { return &nodeClaims{held: map[string]bool{}} }

// claim keeps a on its node, or stops it as a duplicate when the node is
// already held and a is not terminal. runs says whether a job update
// applies to it.
func (n *nodeClaims) claim(a *structs.Allocation, runs bool, decided *decisions) {
	if n.held[a.NodeID] && !a.TerminalStatus() {
		decided.stop(a, DescScaleDown, false) // a duplicate on the node
		return
	}
	n.held[a.NodeID] = true
	n.kept = append(n.kept, a)
	if runs {
		n.running = append(n.running, a)
	}
}

// finished holds a's node without keeping a: a sysbatch alloc that
// finished there is not run again until the job changes.
func (n *nodeClaims) finished(a *structs.Allocation) { n.held[a.NodeID] = true }

// keptAllocs are the kept allocs that were not stopped since, in their
// newest version.
func (n *nodeClaims) keptAllocs(decided *decisions) []*structs.Allocation {
	kept := n.kept[:0]
	for _, a := range n.kept {
		if !decided.stopped(a) {
			kept = append(kept, decided.current(a))
		}
	}
	return kept
}
