package nomad

import (
	"context"
	"sync"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/hashicorp/go-hclog"
)

// gcKind is one kind of core collection; each runs on its own interval.
type gcKind int

const (
	gcEvals gcKind = iota
	gcJobs
	gcNodes
	gcDeployments
)

// gcKinds lists every kind, in the order a forced collection runs them:
// evals (and their allocs) first, so that jobs and nodes are left with
// nothing and can go in the same pass.
var gcKinds = []gcKind{gcEvals, gcJobs, gcNodes, gcDeployments}

func (k gcKind) String() string {
	switch k {
	case gcEvals:
		return "eval"
	case gcJobs:
		return "job"
	case gcNodes:
		return "node"
	case gcDeployments:
		return "deployment"
	}
	return "unknown"
}

// gcLoopConfig configures the leader's periodic core GC.
type gcLoopConfig struct {
	Clock  clock.Clock
	Logger hclog.Logger
	// Intervals says how often each kind is collected.
	Intervals map[gcKind]time.Duration
	// Thresholds are the ages objects must reach (force and now unset:
	// the loop reads now from Clock at each run).
	Thresholds gcThresholds
	// Collect runs one collection of one kind (coreGC.collectKind).
	Collect func(ctx context.Context, kind gcKind, g gcThresholds) (uint64, error)
}

// The loop's debug messages, one per run that ends and one per tick it
// skips, each with the "kind" of collection: an operator sees from them
// whether collections keep up with their intervals.
const (
	gcLogFinished = "collection finished"
	gcLogSkipped  = "previous collection still running; skipping this one"
)

// gcLoopConfig reads the loop's settings from the server config.
func (s *Server) gcLoopConfig() gcLoopConfig {
	c := s.config
	gc := coreGC{deps: s}
	return gcLoopConfig{
		Clock:  s.clock,
		Logger: s.logger.Named("core_gc"),
		Intervals: map[gcKind]time.Duration{
			gcEvals: c.EvalGCInterval, gcJobs: c.JobGCInterval,
			gcNodes: c.NodeGCInterval, gcDeployments: c.DeploymentGCInterval,
		},
		Thresholds: gcThresholds{
			eval: c.EvalGCThreshold, batchEval: c.BatchEvalGCThreshold, job: c.JobGCThreshold,
			node: c.NodeGCThreshold, deployment: c.DeploymentGCThreshold,
		},
		Collect: gc.collectKind,
	}
}

// runCoreGC is the leader loop that collects garbage on its own: each
// kind of object on its interval, with the thresholds of the config. It
// owns its timers and the record of which kind is running; each run goes
// on a goroutine of its own so a long eval collection does not delay the
// node collection, and a tick that comes while the previous run of its
// kind still goes on is skipped (as Nomad skips a core eval while the
// previous one of its kind is outstanding), so runs never pile up. It
// returns when ctx ends (leadership lost), after its runs have stopped:
// a run stops between two raft entries, and the next leader's loop starts
// over from state.
func runCoreGC(ctx context.Context, cfg gcLoopConfig) {
	type result struct {
		kind  gcKind
		index uint64
		err   error
	}
	done := make(chan result, len(gcKinds))
	var runs sync.WaitGroup
	defer runs.Wait()

	running := map[gcKind]bool{}
	timers := make([]clock.Timer, len(gcKinds))
	chans := make([]<-chan time.Time, len(gcKinds))
	for i, k := range gcKinds {
		timers[i] = cfg.Clock.NewTimer(cfg.Intervals[k])
		chans[i] = timers[i].C()
	}
	defer func() {
		for _, t := range timers {
			t.Stop()
		}
	}()

	tick := func(i int) {
		k := gcKinds[i]
		timers[i].Reset(cfg.Intervals[k])
		if running[k] {
			cfg.Logger.Debug(gcLogSkipped, "kind", k)
			return
		}
		running[k] = true
		g := cfg.Thresholds
		g.now = cfg.Clock.Now()
		runs.Add(1)
		go func() {
			defer runs.Done()
			index, err := cfg.Collect(ctx, k, g)
			done <- result{k, index, err}
		}()
	}

	for {
		select {
		case <-ctx.Done():
			return
		case <-chans[0]:
			tick(0)
		case <-chans[1]:
			tick(1)
		case <-chans[2]:
			tick(2)
		case <-chans[3]:
			tick(3)
		case r := <-done:
			running[r.kind] = false
			switch {
			case r.err == nil:
				cfg.Logger.Debug(gcLogFinished, "kind", r.kind, "index", r.index)
			case ctx.Err() == nil:
				cfg.Logger.Error("garbage collection failed; the next interval tries again", "kind", r.kind, "error", r.err)
			}
		}
	}
}
