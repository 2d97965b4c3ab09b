package deploymentwatcher

import (
	"context"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// JobReader is what the decisions shared with the deployment endpoints
// read: a deployment's job and its versions.
type JobReader interface {
	JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error)
	// JobVersionsByID returns every stored version of a job, newest
	// first.
	JobVersionsByID(ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error)
}

// State is what the watcher reads of the state store, each read adding
// what it looked at to ws so that the loop wakes when any of it changes.
// The server's state store satisfies it as it is.
type State interface {
	JobReader
	// AbandonCh is closed when a snapshot restore replaces the store.
	AbandonCh() <-chan struct{}
	// Deployments iterates over every stored deployment.
	Deployments(ws memdb.WatchSet) (memdb.ResultIterator, error)
	AllocsByDeployment(ws memdb.WatchSet, deploymentID string) ([]*structs.Allocation, error)
}

// Raft writes the watcher's decisions, each as one raft entry; nothing
// else the watcher does changes state, so a new leader's watcher picks up
// where the last one stopped from state alone.
type Raft interface {
	// ApplyDeploymentStatus commits a status change with the job and
	// eval that come with it (DeploymentStatusUpdateRequestType).
	ApplyDeploymentStatus(req *structs.DeploymentStatusUpdateRequest) error
	// ApplyDeploymentPromotion commits a promotion with its eval
	// (DeploymentPromoteRequestType).
	ApplyDeploymentPromotion(req *structs.DeploymentPromoteRequest) error
	// UpsertEvals commits a batch of evals (EvalUpdateRequestType).
	UpsertEvals(evals []*structs.Evaluation) error
}

// Config is what the watcher depends on.
type Config struct {
	// State returns the current state store (a snapshot restore replaces
	// it, and abandons the old one, which wakes the loop).
	State func() State
	Raft  Raft
	// Clock is the server's injected clock (a fake one in tests): the
	// progress deadlines, the eval batch and the retries are timers on it.
	Clock  clock.Clock
	Logger hclog.Logger
	// EvalBatchDuration is how long health changes are gathered before
	// the evals they call for are written, one per job, in one entry: a
	// rollout of many allocs turning healthy within the window costs one
	// eval per job, not one per alloc.
	EvalBatchDuration time.Duration
	// RetryInterval is how long the watcher waits after a failed read or
	// write before it looks again.
	RetryInterval time.Duration
	// NewID makes eval IDs (structs.GenerateUUID unless a test sets it).
	NewID func() string
}

// Default watcher timings, as Nomad's: health changes are batched for a
// quarter of a second.
const (
	defaultEvalBatch = 250 * time.Millisecond
	defaultRetry     = time.Second
	maxRetry         = time.Minute
)

// Watcher is the leader loop that owns deployment state transitions. One
// goroutine (Run) does everything: it reads every active deployment from
// the state store, decides for each what must happen, and writes those
// decisions through raft. It fails a deployment that has an
// unhealthy alloc or missed its progress deadline (registering the last
// stable job version again when a group asks for auto_revert), promotes
// canaries that are all healthy when every waiting group asks for
// auto_promote, and creates an eval for a job whose deployment saw health
// change, so the scheduler places the next batch. Paused, pending and
// blocked deployments wait. Making a deployment successful is the
// scheduler's (it sees when nothing is left to place).
//
// What it keeps in memory is only what it has already acted on (the health
// each deployment had when it last asked for an eval) and the evals
// waiting for their batch; both are rebuilt from state by the next
// leader's watcher, which starts by asking for one eval per active
// deployment so that no change made during the election is missed.
//
// A Watcher serves one term of leadership: the server makes a new one
// each time it becomes leader.
type Watcher struct {
	cfg Config

	// seen is each active deployment's health as of the last eval asked
	// for it.
	seen map[string]healthMark
	// pending are the evals waiting for the batch timer, by job.
	pending map[structs.NamespacedID]*structs.Evaluation
}

// healthMark is what the watcher compares to notice a health change.
type healthMark struct{ healthy, unhealthy, placed int }

func markOf(d *structs.Deployment) healthMark {
	var m healthMark
	for _, st := range d.TaskGroups {
		m.healthy += st.HealthyAllocs
		m.unhealthy += st.UnhealthyAllocs
		m.placed += st.PlacedAllocs
	}
	return m
}

// New returns a watcher; Run starts it.
func New(cfg Config) *Watcher {
	if cfg.EvalBatchDuration <= 0 {
		cfg.EvalBatchDuration = defaultEvalBatch
	}
	if cfg.RetryInterval <= 0 {
		cfg.RetryInterval = defaultRetry
	}
	if cfg.NewID == nil {
		cfg.NewID = structs.GenerateUUID
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Watcher{cfg: cfg, seen: map[string]healthMark{}, pending: map[structs.NamespacedID]*structs.Evaluation{}}
}

// Run watches until ctx ends (leadership lost). Evals still waiting for
// their batch then are dropped: the next leader's watcher asks again.
func (w *Watcher) Run(ctx context.Context) {
	var batch clock.Timer
	var batchC <-chan time.Time
	defer func() {
		if batch != nil {
			batch.Stop()
		}
	}()
	// retry doubles with each failed pass in a row, up to maxRetry, so
	// that a write the FSM keeps refusing costs a raft entry a minute,
	// not one a second.
	retry := w.cfg.RetryInterval
	for {
		ws := memdb.NewWatchSet()
		next, err := w.pass(ws)
		// wake is the moment of the next pass without a change: a retry
		// after a failure, or the pass's next deadline. The timer is
		// armed at the moment itself, so time that moves meanwhile does
		// not make it late.
		var wake time.Time
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.cfg.Logger.Error("deployment watcher pass failed; retrying", "error", err, "retry_in", retry)
			wake = w.cfg.Clock.Now().Add(retry)
			retry = min(2*retry, maxRetry)
		} else {
			retry = w.cfg.RetryInterval
			wake = next
		}
		if len(w.pending) > 0 && batch == nil {
			batch = w.cfg.Clock.NewTimer(w.cfg.EvalBatchDuration)
			batchC = batch.C()
		}
		var deadline clock.Timer
		var deadlineC <-chan time.Time
		if !wake.IsZero() {
			deadline = w.cfg.Clock.NewTimerAt(wake)
			deadlineC = deadline.C()
		}
		watchCtx, cancel := context.WithCancel(ctx)
		changed := ws.WatchCh(watchCtx)
		select {
		case <-ctx.Done():
		case <-changed:
		case <-deadlineC:
		case <-batchC:
			batch, batchC = nil, nil
			w.flush()
		}
		cancel()
		if deadline != nil {
			deadline.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// flush writes the batched evals in one raft entry.
func (w *Watcher) flush() {
	if len(w.pending) == 0 {
		return
	}
	evals := make([]*structs.Evaluation, 0, len(w.pending))
	for _, e := range w.pending {
		evals = append(evals, e)
	}
	sort.Slice(evals, func(i, j int) bool { return evals[i].ID < evals[j].ID })
	w.pending = map[structs.NamespacedID]*structs.Evaluation{}
	if err := w.cfg.Raft.UpsertEvals(evals); err != nil {
		// The marks stay as they are: a deployment whose eval was lost
		// would wait for its next health change, so forget them instead
		// and ask again on the next pass.
		for _, e := range evals {
			delete(w.seen, e.DeploymentID)
		}
		w.cfg.Logger.Error("writing deployment evals failed; asking again", "error", err, "evals", len(evals))
	}
}

// pass looks at every active deployment once, acts on what it finds, adds
// what it read to ws, and returns the earliest progress deadline still
// ahead (zero for none).
func (w *Watcher) pass(ws memdb.WatchSet) (time.Time, error) {
	st := w.cfg.State()
	ws.Add(st.AbandonCh())
	it, err := st.Deployments(ws)
	if err != nil {
		return time.Time{}, err
	}
	now := w.cfg.Clock.Now()
	var next time.Time
	active := map[string]bool{}
	var firstErr error
	for raw := it.Next(); raw != nil; raw = it.Next() {
		d := raw.(*structs.Deployment)
		if !d.Active() {
			continue
		}
		active[d.ID] = true
		cutoff, err := w.watch(ws, st, d, now)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if !cutoff.IsZero() && (next.IsZero() || cutoff.Before(next)) {
			next = cutoff
		}
	}
	for id := range w.seen {
		if !active[id] {
			delete(w.seen, id)
		}
	}
	return next, firstErr
}

// watch decides about one active deployment at now, and returns its next
// progress deadline.
func (w *Watcher) watch(ws memdb.WatchSet, st State, d *structs.Deployment, now time.Time) (time.Time, error) {
	if d.Status != structs.DeploymentStatusRunning {
		// Paused, pending and blocked deployments wait for a person (or,
		// for blocked ones, another region); resuming creates its own eval.
		delete(w.seen, d.ID)
		return time.Time{}, nil
	}
	allocs, err := st.AllocsByDeployment(ws, d.ID)
	if err != nil {
		return time.Time{}, err
	}
	h := summariseAllocHealth(d, allocs)
	cutoff := nextProgressCutoff(d, h)
	switch {
	case h.unhealthy > 0:
		return time.Time{}, w.fail(st, d, structs.DeploymentStatusDescriptionFailedAllocations, now)
	case !cutoff.IsZero() && !now.Before(cutoff):
		return time.Time{}, w.fail(st, d, structs.DeploymentStatusDescriptionProgressDeadline, now)
	case canAutoPromote(d, h):
		job, err := st.JobByID(nil, d.Namespace, d.JobID)
		if err != nil {
			return cutoff, err
		}
		w.cfg.Logger.Info("promoting canaries automatically", "deployment", d.ID, "job", d.JobID)
		w.seen[d.ID] = markOf(d)
		return cutoff, w.cfg.Raft.ApplyDeploymentPromotion(&structs.DeploymentPromoteRequest{
			DeploymentID: d.ID, All: true, Eval: Eval(job, d, now, w.cfg.NewID()), UpdatedAt: now.UnixNano(),
			WriteRequest: structs.WriteRequest{Namespace: d.Namespace},
		})
	}
	if mark, ok := w.seen[d.ID]; !ok || mark != markOf(d) {
		if err := w.askForEval(st, d, now); err != nil {
			return cutoff, err
		}
	}
	return cutoff, nil
}

// askForEval queues an eval for d's job for the next batch; a job already
// queued keeps its one eval.
func (w *Watcher) askForEval(st State, d *structs.Deployment, now time.Time) error {
	w.seen[d.ID] = markOf(d)
	key := structs.NamespacedID{Namespace: d.Namespace, ID: d.JobID}
	if _, ok := w.pending[key]; ok {
		return nil
	}
	job, err := st.JobByID(nil, d.Namespace, d.JobID)
	if err != nil {
		return err
	}
	w.pending[key] = Eval(job, d, now, w.cfg.NewID())
	return nil
}

// fail fails d, reverting its job if it asks for that.
func (w *Watcher) fail(st State, d *structs.Deployment, why string, now time.Time) error {
	req, reverted, err := FailureRequest(st, d, why, now, w.cfg.NewID)
	if err != nil {
		return err
	}
	req.Namespace = d.Namespace
	w.cfg.Logger.Info("failing deployment", "deployment", d.ID, "job", d.JobID, "description", req.DeploymentUpdate.StatusDescription)
	if reverted != nil {
		w.cfg.Logger.Info("reverting job", "job", d.JobID, "to_version", *reverted)
	}
	delete(w.pending, structs.NamespacedID{Namespace: d.Namespace, ID: d.JobID})
	delete(w.seen, d.ID)
	return w.cfg.Raft.ApplyDeploymentStatus(req)
}
