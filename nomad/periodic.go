package nomad

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// ErrPeriodicNotTracked is returned by ForceRun for a job the dispatcher
// does not track: it is not periodic, stopped, or this server does not
// lead.
var ErrPeriodicNotTracked = structs.NewCodedError("PeriodicNotTracked", "periodic job is not tracked by the dispatcher")

// errChildExists means the child of a launch time was already registered
// (a forced launch in the same second as a scheduled one).
var errChildExists = errors.New("periodic child already exists")

// PeriodicDispatchConfig is what the dispatcher needs from the server.
type PeriodicDispatchConfig struct {
	Clock  clock.Clock
	Logger hclog.Logger
	// State returns the current state store. It is a function because the
	// FSM replaces the store on a snapshot restore.
	State func() *state.StateStore
	// Register commits a child job with its evaluation through raft, the
	// way Job.Register commits a job, and returns the raft index.
	Register func(*structs.JobRegisterRequest) (uint64, error)
	// CatchUpWindow bounds how far back a new leader looks for a launch
	// missed while no leader ran. Children older than the job GC threshold
	// may be gone from state, so beyond it a launch cannot be told apart
	// from a missed one; 0 means no bound.
	CatchUpWindow time.Duration
}

// PeriodicDispatch launches the children of periodic jobs. It runs only on
// the leader: SetEnabled(true) starts its loop, SetEnabled(false) stops it
// and forgets every job, and the new leader rebuilds it from state with
// Restore.
//
// Ownership: mu guards tracked and enabled; the loop goroutine (one
// at a time, owned by the context SetEnabled makes and waited for when it
// is disabled) is the only one that launches on schedule. No lock is held
// while launching: a launch commits through raft, and the FSM's hook calls
// back into Add on the same server, so holding mu there would deadlock.
type PeriodicDispatch struct {
	cfg    PeriodicDispatchConfig
	logger hclog.Logger

	// lifecycle serialises SetEnabled calls; it is held while waiting for
	// the loop to stop, which mu must never be.
	lifecycle sync.Mutex
	cancel    context.CancelFunc
	done      chan struct{}

	mu      sync.Mutex
	enabled bool
	tracked map[structs.NamespacedID]*periodicEntry
	wake    chan struct{} // tells the loop that tracked changed
}

// periodicEntry is one tracked job and its next launch. next may be in the
// past after Restore: the loop launches it at once.
type periodicEntry struct {
	job      *structs.Job
	schedule *cronSchedule
	next     time.Time
}

// NewPeriodicDispatch returns a disabled dispatcher.
func NewPeriodicDispatch(cfg PeriodicDispatchConfig) *PeriodicDispatch {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real()
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &PeriodicDispatch{
		cfg:     cfg,
		logger:  cfg.Logger,
		tracked: map[structs.NamespacedID]*periodicEntry{},
		wake:    make(chan struct{}, 1),
	}
}

// SetEnabled starts the dispatcher's loop (true) or stops it, waits for it
// and forgets every tracked job (false). Calling it twice with the same
// value does nothing.
func (d *PeriodicDispatch) SetEnabled(enabled bool) {
	d.lifecycle.Lock()
	defer d.lifecycle.Unlock()
	d.mu.Lock()
	was := d.enabled
	d.enabled = enabled
	if !enabled {
		d.tracked = map[structs.NamespacedID]*periodicEntry{}
	}
	d.mu.Unlock()
	switch {
	case enabled && !was:
		ctx, cancel := context.WithCancel(context.Background())
		d.cancel, d.done = cancel, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			d.run(ctx)
		}(d.done)
	case !enabled && was:
		d.cancel()
		<-d.done
		d.cancel, d.done = nil, nil
	}
}

// Add tracks a periodic job, or updates a tracked one. A job that is no
// longer periodic, is stopped or is parameterized is untracked instead.
// An unchanged periodic block keeps its pending launch, so re-registering
// a job near its launch time does not skip that launch. It does nothing
// while the dispatcher is disabled (on followers).
func (d *PeriodicDispatch) Add(job *structs.Job) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addLocked(job, time.Time{})
}

// addLocked tracks job; a non-zero since is the time after which the next
// launch is looked for, instead of now (Restore catches up from there).
func (d *PeriodicDispatch) addLocked(job *structs.Job, since time.Time) error {
	if !d.enabled {
		return nil
	}
	key := job.NamespacedID()
	if !job.IsPeriodic() || job.Stopped() || job.IsParameterized() {
		d.untrackLocked(key)
		return nil
	}
	if err := ValidatePeriodic(job); err != nil {
		d.untrackLocked(key)
		return fmt.Errorf("job %s: %w", key, err)
	}
	schedule, err := parseSchedule(job.Periodic)
	if err != nil {
		d.untrackLocked(key)
		return fmt.Errorf("job %s: %w", key, err)
	}
	if cur, ok := d.tracked[key]; ok && since.IsZero() && sameSchedule(cur.job.Periodic, job.Periodic) {
		cur.job = job
		return nil
	}
	if since.IsZero() {
		since = d.cfg.Clock.Now()
	}
	d.tracked[key] = &periodicEntry{job: job, schedule: schedule, next: schedule.next(since)}
	d.poke()
	return nil
}

// Remove stops tracking a job (it was stopped or purged).
func (d *PeriodicDispatch) Remove(namespace, jobID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.untrackLocked(structs.NamespacedID{Namespace: nsOrDefault(namespace), ID: jobID})
}

func (d *PeriodicDispatch) untrackLocked(key structs.NamespacedID) {
	if _, ok := d.tracked[key]; ok {
		delete(d.tracked, key)
		d.poke()
	}
}

// poke wakes the loop to re-read tracked; a wake already pending is enough.
func (d *PeriodicDispatch) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Tracked reports whether a job is tracked and its next launch.
func (d *PeriodicDispatch) Tracked(namespace, jobID string) (next time.Time, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.tracked[structs.NamespacedID{Namespace: nsOrDefault(namespace), ID: jobID}]
	if !ok {
		return time.Time{}, false
	}
	return e.next, true
}

// ForceRun launches a tracked job now (`job periodic force`), whatever its
// schedule and even with prohibit_overlap: the user asked for this run. The
// scheduled launches are unchanged.
func (d *PeriodicDispatch) ForceRun(namespace, jobID string) (*structs.Evaluation, error) {
	d.mu.Lock()
	_, ok := d.tracked[structs.NamespacedID{Namespace: nsOrDefault(namespace), ID: jobID}]
	enabled := d.enabled
	d.mu.Unlock()
	if !enabled {
		return nil, fmt.Errorf("periodic force %s: %w", jobID, structs.ErrNotLeader)
	}
	if !ok {
		return nil, fmt.Errorf("periodic force %s: %w", jobID, ErrPeriodicNotTracked)
	}
	eval, err := d.launch(nsOrDefault(namespace), jobID, d.cfg.Clock.Now(), true)
	if errors.Is(err, errChildExists) {
		return nil, fmt.Errorf("periodic force %s: a child was already launched this second; retry: %w", jobID, err)
	}
	return eval, err
}

// Restore tracks every periodic job in st, for a new leader. A launch that
// fell due while no leader ran is launched once: the newest missed one.
// The last launch is read from the children in state (their IDs carry
// their launch times), bounded by the job's submit time (a spec changed
// since is not caught up) and by CatchUpWindow.
//
// mu is held across the read and the adds, so an FSM hook for a newer
// version of a job either is already in what Restore reads or runs after
// it, and an older copy never replaces a newer one.
func (d *PeriodicDispatch) Restore(st *state.StateStore) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.enabled {
		return nil
	}
	it, err := st.JobsByPeriodic(nil, true)
	if err != nil {
		return err
	}
	now := d.cfg.Clock.Now()
	for raw := it.Next(); raw != nil; raw = it.Next() {
		job := raw.(*structs.Job)
		since, err := d.lastLaunch(st, job, now)
		if err != nil {
			return err
		}
		if err := d.addLocked(job, since); err != nil {
			// One bad job (stored before validation existed) must not keep
			// the cluster from having a leader.
			d.logger.Error("not tracking periodic job", "error", err)
		}
	}
	return nil
}

// lastLaunch is the time after which a restored job's next launch is due.
func (d *PeriodicDispatch) lastLaunch(st *state.StateStore, job *structs.Job, now time.Time) (time.Time, error) {
	since := time.Unix(0, job.SubmitTime)
	if d.cfg.CatchUpWindow > 0 {
		if floor := now.Add(-d.cfg.CatchUpWindow); floor.After(since) {
			since = floor
		}
	}
	children, err := periodicChildren(st, job)
	if err != nil {
		return time.Time{}, err
	}
	for _, c := range children {
		if t, err := LaunchTime(c.ID); err == nil && t.After(since) {
			since = t
		}
	}
	if since.After(now) {
		since = now
	}
	return since, nil
}

// periodicChildren returns the children of a periodic parent in state.
func periodicChildren(st *state.StateStore, parent *structs.Job) ([]*structs.Job, error) {
	it, err := st.JobsByIDPrefix(nil, parent.Namespace, parent.ID+periodicChildInfix)
	if err != nil {
		return nil, err
	}
	var out []*structs.Job
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if c := raw.(*structs.Job); c.ParentID == parent.ID && strings.HasPrefix(c.ID, parent.ID+periodicChildInfix) {
			out = append(out, c)
		}
	}
	return out, nil
}
