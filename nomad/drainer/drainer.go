package drainer

import (
	"context"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
)

// Raft writes the drainer's decisions: nothing else changes state.
type Raft interface {
	// MarkMigrations commits one batch of migration marks with its evals
	// and node events (AllocUpdateDesiredTransitionRequestType).
	MarkMigrations(req *structs.AllocUpdateDesiredTransitionRequest) (uint64, error)
	// EndDrain commits the end of a drain (NodeUpdateDrainRequestType).
	EndDrain(req *structs.NodeUpdateDrainRequest) (uint64, error)
}

// Config is what the drainer depends on.
type Config struct {
	// Clock is the server's injected clock (a fake one in tests), so
	// deadlines come when a test says so. The loop arms with AfterFuncAt,
	// at the moment it wants: a wake measured from a Now read a little
	// earlier would be late, or lost, if time moved in between.
	Clock  clock.Clock
	Logger hclog.Logger
	// State returns a snapshot of the current state store and the
	// channel the store closes when a snapshot restore replaces it
	// (which wakes the loop).
	State func() (snap State, abandoned <-chan struct{})
	Raft  Raft
	// NewID makes eval IDs.
	NewID func() string
	// RetryDelay is how long the loop waits after a failed pass before the
	// next one (default 1s on Clock), so a raft that refuses writes is not
	// hammered.
	RetryDelay time.Duration
	// MinPassInterval bounds how often state changes start a pass: a pass
	// reads every alloc of the jobs it paces, and while a large job drains
	// its allocs change many times a second. Changes that come sooner are
	// taken together by the next pass, on Clock. Zero means no bound.
	// The loop's own writes are never delayed by it, a deadline by at most
	// the interval.
	MinPassInterval time.Duration
}

// Log messages, for operators and for tests that wait on them.
const (
	LogPassFailed = "drain pass failed; retrying"
	LogMarked     = "marked allocations to migrate"
	LogComplete   = "node drain complete"
)

// Run is the drainer loop. It returns when ctx ends (leadership lost). It
// owns nothing but its timer: each pass reads state afresh, so stopping it
// at any point loses nothing a new leader's drainer would need.
func Run(ctx context.Context, cfg Config) {
	if cfg.RetryDelay <= 0 {
		cfg.RetryDelay = time.Second
	}
	var changed bool // the last sleep ended because state changed
	var lastPass time.Time
	for ctx.Err() == nil {
		if changed && cfg.MinPassInterval > 0 {
			pause(ctx, cfg.Clock, lastPass.Add(cfg.MinPassInterval))
		}
		snap, abandoned := cfg.State()
		ws := memdb.NewWatchSet()
		ws.Add(abandoned)
		now := cfg.Clock.Now()
		lastPass = now
		acts, err := Plan(snap, ws, now, cfg.NewID)
		if err == nil {
			err = apply(cfg, acts)
			if err == nil && !acts.Empty() {
				changed = false
				continue // what it wrote changed state: look again at once
			}
		}
		wake := time.Time{}
		if err != nil {
			cfg.Logger.Error(LogPassFailed, "error", err)
			wake = now.Add(cfg.RetryDelay)
		} else if !acts.NextDeadline.IsZero() {
			wake = acts.NextDeadline
		}
		changed = sleep(ctx, cfg.Clock, ws, wake, err != nil)
	}
}

// pause waits until the clock reaches until (or ctx ends).
func pause(ctx context.Context, clock clock.Clock, until time.Time) {
	if !until.After(clock.Now()) {
		return
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	t := clock.AfterFuncAt(until, cancel)
	defer t.Stop()
	<-pctx.Done()
}

// sleep waits until something in ws changes, ctx ends, or the clock
// reaches wake (when set), and reports whether a change woke it. After a
// failure it waits for the clock only: a write that failed may have
// changed nothing.
func sleep(ctx context.Context, clock clock.Clock, ws memdb.WatchSet, wake time.Time, clockOnly bool) bool {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if !wake.IsZero() {
		// Read from the clock now, not from the pass's start: time may
		// have moved meanwhile, and a wake already due means no sleep.
		if !wake.After(clock.Now()) {
			return false
		}
		t := clock.AfterFuncAt(wake, cancel)
		defer t.Stop()
	}
	if clockOnly {
		<-wctx.Done()
		return false
	}
	return ws.WatchCtx(wctx) == nil // an error says the context ended
}

func apply(cfg Config, acts *Actions) error {
	if acts.Migrate != nil {
		idx, err := cfg.Raft.MarkMigrations(acts.Migrate)
		if err != nil {
			return err
		}
		cfg.Logger.Info(LogMarked, "allocations", len(acts.Migrate.Allocs), "evals", len(acts.Migrate.Evals), "index", idx)
	}
	for _, req := range acts.Complete {
		idx, err := cfg.Raft.EndDrain(req)
		if err != nil {
			return err
		}
		cfg.Logger.Info(LogComplete, "node_id", req.NodeID, "index", idx)
	}
	return nil
}
