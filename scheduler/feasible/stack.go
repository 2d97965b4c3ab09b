package feasible

import (
	"math"
	"sort"

	"github.com/drover-sched/drover/structs"
)

// SelectOptions tune one Select.
type SelectOptions struct {
	// PenaltyNodeIDs are nodes a rescheduled allocation is moving away
	// from; they score -1 on "node-reschedule-penalty".
	PenaltyNodeIDs map[string]struct{}
	// PreferredNodes are tried first (sticky disk, in-place); the whole
	// node set is tried only if none of them fits.
	PreferredNodes []*structs.Node
	// AllocName is the allocation being placed, for logs.
	AllocName string
	// InPlaceAllocID, when set, is an allocation this placement replaces
	// in place (same node, same ID): it is left out of the fit and of every
	// count of where the job is, because the placement is its new version.
	// Without it, an in-place check done the Nomad way (append a stop,
	// Select, PopUpdate) still counts the old version's resources, because
	// a stopped but running allocation holds them (promise 1), and a full
	// node refuses the update.
	InPlaceAllocID string
}

// RankedNode is a node chosen (or considered) for a placement.
type RankedNode struct {
	Node       *structs.Node
	FinalScore float64
	// Scores are the applicable scores averaged into FinalScore.
	Scores []float64
	// Resources is the grant, with ports chosen.
	Resources *structs.AllocatedResources
	// Proposed are the allocations that hold resources on the node before
	// this placement (EvalContext.ProposedAllocs).
	Proposed []*structs.Allocation

	scoreNames []string
}

// Stack chooses nodes for placements of one job.
type Stack interface {
	// SetNodes sets the candidate nodes (already ready and in the job's
	// datacenters and pool); the stack shuffles them with the context's
	// rand.
	SetNodes(nodes []*structs.Node)
	// SetJob sets the job whose groups are placed.
	SetJob(job *structs.Job)
	// Select returns the best node for one allocation of tg, or nil when
	// nothing fits; the context's Metrics say why. Select starts fresh
	// metrics itself (EvalContext.Reset), so fields the caller adds, such
	// as NodesAvailable, belong after it.
	Select(tg *structs.TaskGroup, opts *SelectOptions) *RankedNode
}

// Sampling limits: a service placement scores about log2(n) feasible nodes,
// a batch placement two ("power of two choices"): enough to find a good
// node without scoring the whole cluster.
const (
	batchCandidateLimit = 2
	minCandidateLimit   = 2
	// maxNegativeSkips is how many candidates with a negative score (a
	// collision with the job, the node being moved away from) may be
	// looked past without counting toward the limit, so a few bad nodes
	// in a row do not crowd out the good ones.
	maxNegativeSkips = 3
	// scoreMetaKept is how many top candidates are kept in the metrics.
	scoreMetaKept = 5
)

// GenericStack places service and batch allocations.
type GenericStack struct {
	stackJob
	batch bool
	ring  *ringSource

	// fullWalk keeps statically infeasible nodes in the bucketed sources
	// (newBucketSource), so that every Select walks them again, checks
	// the fit on every node without the memo of full nodes (fullNodes),
	// and runs every check on every node of the ring (no groupRing): the
	// reference the equivalence test compares the fast path with.
	fullWalk bool
}

// NewGenericStack returns a stack for service (batch false) or batch jobs.
func NewGenericStack(batch bool, ctx *EvalContext) Stack {
	return &GenericStack{stackJob: stackJob{ctx: ctx, groups: map[string]*groupInfo{}}, batch: batch, ring: &ringSource{}}
}

// SetNodes shuffles the nodes with the context's rand and makes them the
// candidates. Bucketed sources are rebuilt on the next Select that needs
// them.
func (s *GenericStack) SetNodes(nodes []*structs.Node) {
	shuffled := append([]*structs.Node(nil), nodes...)
	s.ctx.rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	s.nodes = shuffled
	s.ring = &ringSource{nodes: shuffled}
	for _, g := range s.groups {
		g.candidates, g.verdicts = nil, nil
	}
}

// Select picks the best node for one allocation of tg.
func (s *GenericStack) Select(tg *structs.TaskGroup, opts *SelectOptions) *RankedNode {
	g, opts, tracker := s.start(tg, opts, s.fullWalk)
	if g == nil {
		return nil
	}
	if opts.InPlaceAllocID != "" {
		defer tracker.exclude("")
	}

	src := s.source(g, tracker, opts.InPlaceAllocID != "")
	sel := newSelection(s.ctx, s.job, g, opts, tracker)
	if len(opts.PreferredNodes) > 0 {
		pref := &ringSource{nodes: opts.PreferredNodes}
		pref.each(len(opts.PreferredNodes), sel.try)
		if best := sel.finish(); best != nil {
			return best
		}
		sel = newSelection(s.ctx, s.job, g, opts, tracker)
	}
	sel.run(src, s.limit())
	best := sel.finish()
	if best == nil {
		if b, ok := src.(*bucketSource); ok {
			b.explainLeftOut(s.ctx.metrics)
		}
	}
	return best
}

// source returns the ring of shuffled nodes (seen through the group's
// static verdicts, ring_verdicts.go), or for groups with spreads or
// affinities the bucketed source, scored for this Select.
func (s *GenericStack) source(g *groupInfo, t *jobTracker, inPlace bool) candidateSource {
	if len(g.spreads) == 0 && len(g.affinities) == 0 {
		if s.fullWalk {
			return s.ring
		}
		return groupRing{ring: s.ring, g: g, ctx: s.ctx}
	}
	if g.candidates == nil {
		g.candidates = newBucketSource(s.ctx, g, s.nodes, s.fullWalk)
	}
	g.candidates.prepare(t, inPlace)
	return g.candidates
}

func (s *GenericStack) limit() int {
	if s.batch {
		return batchCandidateLimit
	}
	l := minCandidateLimit
	if n := len(s.nodes); n > 0 {
		l = max(l, int(math.Ceil(math.Log2(float64(n)))))
	}
	return l
}

// selection is the state of one Select: the candidates scored so far.
type selection struct {
	ctx       *EvalContext
	job       *structs.Job
	g         *groupInfo
	opts      *SelectOptions
	tracker   *jobTracker
	algorithm string

	best    *RankedNode
	top     []*RankedNode
	skipped int
	// full is the dimension the last node ranked did not fit on, when
	// the memo of full nodes holds that refusal ("" otherwise).
	full string
}

func newSelection(ctx *EvalContext, job *structs.Job, g *groupInfo, opts *SelectOptions, t *jobTracker) *selection {
	return &selection{
		ctx: ctx, job: job, g: g, opts: opts, tracker: t,
		algorithm: ctx.SchedulerConfig().EffectiveAlgorithm(),
	}
}

func (sel *selection) run(src candidateSource, limit int) {
	src.each(limit, sel.try)
}

// try evaluates one node and says whether it counts toward the candidate
// limit, or that it is full until the plan touches it.
func (sel *selection) try(node *structs.Node, b *bucket, checked bool) outcome {
	option := sel.rank(node, b, checked)
	if option == nil {
		return outcome{full: sel.full}
	}
	sel.keep(option)
	if option.FinalScore < 0 && sel.skipped < maxNegativeSkips {
		sel.skipped++
		return outcome{}
	}
	return outcome{counted: true}
}

// rank runs the feasibility chain (only the checks after the static ones
// when the node is checked), the fit and the scores for one node; nil
// means filtered or exhausted (recorded in the metrics).
func (sel *selection) rank(node *structs.Node, b *bucket, checked bool) *RankedNode {
	ctx := sel.ctx
	sel.full = ""
	ctx.metrics.EvaluateNode()
	first := 0
	if checked {
		first = sel.g.static
	}
	if !sel.g.feasibleFrom(ctx, node, first) {
		return nil
	}
	fit := sel.g.fit(ctx, node, sel.opts.InPlaceAllocID)
	if fit.exhausted != "" {
		ctx.metrics.ExhaustedNode(node.ComputedClass, fit.exhausted)
		if fit.remembered {
			sel.full = fit.exhausted
		}
		return nil
	}
	// Every score that applies to this placement is on every node's sheet
	// (0 where it does not bite), so nodes are compared over the same
	// terms: a node that misses an affinity scores 0 on it rather than
	// skipping it and being averaged over fewer terms.
	var sheet scoreSheet
	sheet.add(scoreNameBinPack, fitnessScore(sel.algorithm, node, fit.util))
	sheet.add(scoreNameAntiAffinity, antiAffinityScore(sel.tracker.onNode(node.ID, sel.g.tg.Name), sel.g.desiredCount()))
	if len(sel.opts.PenaltyNodeIDs) > 0 {
		penalty := 0.0
		if _, ok := sel.opts.PenaltyNodeIDs[node.ID]; ok {
			penalty = -1
		}
		sheet.add(scoreNamePenalty, penalty)
	}
	if len(sel.g.affinities) > 0 {
		aff := 0.0
		if b != nil {
			aff = b.affinity
		} else {
			// Preferred nodes come without a bucket.
			aff = affinityScore(ctx, sel.g.affinities, node)
		}
		sheet.add(scoreNameAffinity, aff)
	}
	if len(sel.g.spreads) > 0 {
		spread := 0.0
		if b != nil {
			spread = b.spread
		} else {
			spread = sel.spreadFor(node)
		}
		sheet.add(scoreNameSpread, spread)
	}
	return &RankedNode{
		Node:       node,
		FinalScore: sheet.mean(),
		Scores:     sheet.values,
		Resources:  fit.resources,
		Proposed:   fit.proposed,
		scoreNames: sheet.names,
	}
}

// spreadFor scores a node that is not in a bucket (a preferred node) on
// the group's spread blocks.
func (sel *selection) spreadFor(node *structs.Node) float64 {
	src := sel.g.candidates
	if src == nil {
		return 0
	}
	values := make([]string, len(sel.g.spreads))
	found := make([]bool, len(sel.g.spreads))
	for i, sp := range sel.g.spreads {
		values[i], found[i] = resolveTarget(sp.Attribute, node)
	}
	return src.spread.score(values, found, sel.g.desiredCount())
}

// keep remembers the best option (first wins ties, so the shuffled order
// decides) and the top few for the metrics.
func (sel *selection) keep(o *RankedNode) {
	if sel.best == nil || o.FinalScore > sel.best.FinalScore {
		sel.best = o
	}
	i := sort.Search(len(sel.top), func(i int) bool { return sel.top[i].FinalScore < o.FinalScore })
	if i < scoreMetaKept {
		sel.top = append(sel.top, nil)
		copy(sel.top[i+1:], sel.top[i:])
		sel.top[i] = o
		if len(sel.top) > scoreMetaKept {
			sel.top = sel.top[:scoreMetaKept]
		}
	}
}

// finish records the top candidates' scores and returns the best.
func (sel *selection) finish() *RankedNode {
	m := sel.ctx.metrics
	for _, o := range sel.top {
		meta := &structs.NodeScoreMeta{NodeID: o.Node.ID, Scores: structs.NewNodeScores(o.scoreNames, o.Scores[:len(o.scoreNames)]), NormScore: o.FinalScore}
		m.ScoreMetaData = append(m.ScoreMetaData, meta)
	}
	return sel.best
}
