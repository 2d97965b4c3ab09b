package feasible

import (
	"github.com/drover-sched/drover/structs"
)

// Score names, as they appear in AllocMetric.ScoreMetaData.
const (
	scoreNameBinPack      = "binpack"
	scoreNameAntiAffinity = "job-anti-affinity"
	scoreNamePenalty      = "node-reschedule-penalty"
	scoreNameAffinity     = "node-affinity"
	scoreNameSpread       = "allocation-spread"
)

// maxFitScore is the top of structs.ScoreFitBinPack's scale.
const maxFitScore = 18.0

// fitnessScore scores how the node fits after the placement, from 0 to 1:
// fuller is better under binpack (pack work onto few machines, keep others
// free for big asks), emptier is better under spread.
func fitnessScore(algorithm string, node *structs.Node, util structs.ComparableResources) float64 {
	if algorithm == structs.SchedulerAlgorithmSpread {
		return structs.ScoreFitSpread(node, util) / maxFitScore
	}
	return structs.ScoreFitBinPack(node, util) / maxFitScore
}

// antiAffinityScore penalises a node that already runs allocations of the
// same job and group, more for each one, relative to the group's count:
// -(collisions+1)/count, and 0 without collisions.
func antiAffinityScore(collisions, desired int) float64 {
	if collisions <= 0 {
		return 0
	}
	s := -float64(collisions+1) / float64(desired)
	if s < -1 {
		s = -1
	}
	return s
}

// affinityScore is the weighted share of the affinities the node matches,
// from -1 (matches every negative one) to 1 (matches every positive one).
// Affinities depend only on node attributes, so the bucketed source
// computes this once per node and SetNodes.
func affinityScore(ctx *EvalContext, affinities []*structs.Affinity, node *structs.Node) float64 {
	var total, sum float64
	for _, a := range affinities {
		w := float64(a.Weight)
		if w < 0 {
			sum -= w
		} else {
			sum += w
		}
		l, lok := resolveTarget(a.LTarget, node)
		r, rok := resolveTarget(a.RTarget, node)
		if checkOperand(ctx, a.Operand, l, lok, r, rok) {
			total += w
		}
	}
	if sum == 0 {
		return 0
	}
	return total / sum
}

// scoreSheet collects a node's applicable scores with their names.
type scoreSheet struct {
	names  []string
	values []float64
}

func (s *scoreSheet) add(name string, v float64) {
	s.names = append(s.names, name)
	s.values = append(s.values, v)
}

// mean is the final score: the average of the applicable scores.
func (s *scoreSheet) mean() float64 {
	if len(s.values) == 0 {
		return 0
	}
	var sum float64
	for _, v := range s.values {
		sum += v
	}
	return sum / float64(len(s.values))
}
