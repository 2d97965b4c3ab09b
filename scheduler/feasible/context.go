package feasible

import (
	"math/rand"
	"regexp"

	"github.com/drover-sched/drover/structs"
	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
)

// State is the read view the stack needs (a *state.StateSnapshot satisfies
// it). Objects it returns are shared and must not be modified.
type State interface {
	Nodes(ws memdb.WatchSet) (memdb.ResultIterator, error)
	NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error)
	AllocsByNode(ws memdb.WatchSet, node string) ([]*structs.Allocation, error)
	AllocsByJob(ws memdb.WatchSet, namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error)
	SchedulerConfig() (uint64, *structs.SchedulerConfiguration, error)
}

// EvalContext is per-evaluation scratch: the state snapshot, the plan being
// built, the metrics of the current placement, a seeded rand, and caches
// that live as long as the evaluation (compiled regexps, parsed version
// constraints, per-class feasibility) or as long as the snapshot (each
// node's allocations, the job's allocation counts).
type EvalContext struct {
	state   State
	plan    *structs.Plan
	rng     *rand.Rand
	logger  hclog.Logger
	metrics *structs.AllocMetric

	regexps  map[string]*regexp.Regexp
	versions map[versionKey]structs.VersionConstraint
	classes  *classEligibility

	// Snapshot caches, dropped by SetState.
	stateAllocs map[string][]*structs.Allocation
	nodes       map[string]*structs.Node
	config      *structs.SchedulerConfiguration
	configRead  bool
	tracker     *jobTracker
}

type versionKey struct {
	constraint string
	strict     bool
}

// NewEvalContext returns a context over state for building plan. rng must be
// seeded from the evaluation so that decisions can be replayed; a nil logger
// discards logs.
func NewEvalContext(state State, plan *structs.Plan, rng *rand.Rand, logger hclog.Logger) *EvalContext {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	if rng == nil {
		// A fixed seed keeps the package free of global randomness even
		// when a caller forgets to pass one.
		rng = rand.New(rand.NewSource(0))
	}
	c := &EvalContext{
		state:    state,
		plan:     plan,
		rng:      rng,
		logger:   logger,
		metrics:  new(structs.AllocMetric),
		regexps:  map[string]*regexp.Regexp{},
		versions: map[versionKey]structs.VersionConstraint{},
		classes:  newClassEligibility(),
	}
	c.dropSnapshotCaches()
	return c
}

// State returns the snapshot the context reads.
func (c *EvalContext) State() State { return c.state }

// Plan returns the plan being built.
func (c *EvalContext) Plan() *structs.Plan { return c.plan }

// Metrics returns the metrics of the current placement.
func (c *EvalContext) Metrics() *structs.AllocMetric { return c.metrics }

// Logger returns the context's logger.
func (c *EvalContext) Logger() hclog.Logger { return c.logger }

// Rand returns the evaluation's seeded random source.
func (c *EvalContext) Rand() *rand.Rand { return c.rng }

// Reset starts fresh metrics for the next placement. Caches survive: they
// describe the snapshot and the plan, not one placement.
func (c *EvalContext) Reset() { c.metrics = new(structs.AllocMetric) }

// SetState switches to a newer snapshot (after a plan was partly refused).
// Everything read from the old snapshot is dropped; per-class constraint
// outcomes are kept because they depend only on node attributes, which the
// class hash covers.
func (c *EvalContext) SetState(s State) {
	c.state = s
	c.dropSnapshotCaches()
}

func (c *EvalContext) dropSnapshotCaches() {
	c.stateAllocs = map[string][]*structs.Allocation{}
	c.nodes = map[string]*structs.Node{}
	c.config, c.configRead = nil, false
	c.tracker = nil
}

// ClassEligibility reports, per computed node class seen so far, whether
// the job could run on that class as far as class-wide checks can tell. The
// scheduler copies it into a blocked evaluation so that only a node of an
// eligible or new class unblocks it.
func (c *EvalContext) ClassEligibility() map[string]bool { return c.classes.summary() }

// EscapedComputedClass reports whether some constraint of the job looked at
// node-unique values, so class eligibility does not tell the whole story
// and any node change should unblock the job.
func (c *EvalContext) EscapedComputedClass() bool { return c.classes.escaped }

// SchedulerConfig returns the cluster scheduler configuration, read once
// per snapshot; nil means defaults.
func (c *EvalContext) SchedulerConfig() *structs.SchedulerConfiguration {
	if !c.configRead {
		c.configRead = true
		if c.state != nil {
			if _, cfg, err := c.state.SchedulerConfig(); err != nil {
				c.logger.Warn("reading scheduler configuration failed, using defaults", "error", err)
			} else {
				c.config = cfg
			}
		}
	}
	return c.config
}

// regexp returns the compiled expression, compiling each pattern once per
// evaluation; nil means the pattern does not compile (and never matches).
func (c *EvalContext) regexp(pattern string) *regexp.Regexp {
	if re, ok := c.regexps[pattern]; ok {
		return re
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		c.logger.Debug("constraint regexp does not compile", "pattern", pattern, "error", err)
		re = nil
	}
	c.regexps[pattern] = re
	return re
}

// versionConstraint returns the parsed constraint, parsing each once per
// evaluation; nil means it does not parse (and never matches).
func (c *EvalContext) versionConstraint(s string, strict bool) structs.VersionConstraint {
	k := versionKey{s, strict}
	if vc, ok := c.versions[k]; ok {
		return vc
	}
	vc, err := structs.ParseVersionConstraint(s, strict)
	if err != nil {
		vc = nil
	}
	c.versions[k] = vc
	return vc
}

// node returns a node by ID from the snapshot, cached.
func (c *EvalContext) node(id string) *structs.Node {
	if n, ok := c.nodes[id]; ok {
		return n
	}
	var n *structs.Node
	if c.state != nil {
		var err error
		if n, err = c.state.NodeByID(nil, id); err != nil {
			c.logger.Warn("node lookup failed", "node_id", id, "error", err)
			n = nil
		}
	}
	c.nodes[id] = n
	return n
}
