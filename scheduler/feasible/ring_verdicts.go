package feasible

import (
	"github.com/drover-sched/drover/structs"
)

// groupRing is the stack's ring of shuffled nodes as one group without
// spread or affinity blocks walks it: the same nodes, from the same shared
// position, with the same metrics, but the verdict of the group's static
// checks (status, drivers, constraints: groupInfo.static) is remembered
// per node the first time the ring reaches it. Those checks cannot change
// their verdict during the evaluation, and an evaluation's Selects go
// round the ring several times (about log2(n) nodes each, and with half
// the fleet ruled out by a constraint, as many again refused): after the
// first round a refused node costs its metrics only, and a node that
// passes only the checks after the static ones.
//
// Unlike the bucketed source, the ring keeps the refused nodes in its walk
// and counts them where it passes them, so a placement's metrics are
// exactly those of the plain ring (ringSource), which the equivalence test
// compares it with.
type groupRing struct {
	ring *ringSource
	g    *groupInfo
	ctx  *EvalContext
}

func (r groupRing) each(limit int, try tryFunc) {
	ring := r.ring
	n := len(ring.nodes)
	v := r.g.ringVerdicts(n)
	m := r.ctx.metrics
	taken := 0
	for i := 0; i < n && taken < limit; i++ {
		at := ring.next
		node := ring.nodes[at]
		ring.next = (at + 1) % n
		passes, reason := v.get(r.g, at, node)
		if !passes {
			m.EvaluateNode()
			m.FilterNode(node.ComputedClass, reason)
			continue
		}
		if try(node, nil, true).counted {
			taken++
		}
	}
}

// staticVerdicts holds, per position in the stack's shuffled node list,
// the group's static verdict: unknown, passes, or refused for one of a few
// reasons (the reasons are the job's constraints and the fixed checks'
// names, so a byte indexes them).
type staticVerdicts struct {
	codes   []uint8
	reasons []string
	index   map[string]uint8
}

const (
	verdictUnknown uint8 = iota
	verdictPasses
	// verdictRefused + i is refused for reasons[i].
	verdictRefused
	maxRemembered = 255 - verdictRefused
)

// ringVerdicts returns the group's verdicts for a ring of n nodes, new
// after SetNodes.
func (g *groupInfo) ringVerdicts(n int) *staticVerdicts {
	if g.verdicts == nil || len(g.verdicts.codes) != n {
		g.verdicts = &staticVerdicts{codes: make([]uint8, n), index: map[string]uint8{}}
	}
	return g.verdicts
}

// get returns the static verdict for the node at position at, running the
// checks the first time.
func (v *staticVerdicts) get(g *groupInfo, at int, node *structs.Node) (bool, string) {
	switch code := v.codes[at]; {
	case code == verdictPasses:
		return true, ""
	case code >= verdictRefused:
		return false, v.reasons[code-verdictRefused]
	}
	reason := g.staticReason(node)
	if reason == "" {
		v.codes[at] = verdictPasses
		return true, ""
	}
	i, ok := v.index[reason]
	if !ok {
		if len(v.reasons) >= int(maxRemembered) {
			// Too many distinct reasons to name in a byte: check
			// this node again next time.
			return false, reason
		}
		i = uint8(len(v.reasons))
		v.reasons = append(v.reasons, reason)
		v.index[reason] = i
	}
	v.codes[at] = verdictRefused + i
	return false, reason
}
