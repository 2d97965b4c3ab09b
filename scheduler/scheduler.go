package scheduler

import (
	"errors"
	"fmt"
	"time"

	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
)

// State is the snapshot a scheduler reads (nomad/state.StateSnapshot
// satisfies it). Objects it returns are shared: the scheduler copies before
// it changes anything.
type State interface {
	feasible.State
	JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error)
	AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error)
	AllocsByNodeTerminal(ws memdb.WatchSet, node string, terminal bool) ([]*structs.Allocation, error)
	EvalByID(ws memdb.WatchSet, id string) (*structs.Evaluation, error)
	EvalsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Evaluation, error)
	DeploymentsByJobID(ws memdb.WatchSet, namespace, jobID string, all bool) ([]*structs.Deployment, error)
	LatestDeploymentByJobID(ws memdb.WatchSet, namespace, jobID string) (*structs.Deployment, error)
	DeploymentByID(ws memdb.WatchSet, id string) (*structs.Deployment, error)
	LatestIndex() (uint64, error)
}

// Planner is how a scheduler acts: the worker implements it.
type Planner interface {
	// SubmitPlan returns what committed; if newState is non-nil the plan
	// was (partly) refused and the scheduler must continue on newState
	// (refreshed to result.RefreshIndex).
	SubmitPlan(plan *structs.Plan) (result *structs.PlanResult, newState State, err error)
	// UpdateEval records the evaluation's outcome (or cancels another).
	UpdateEval(eval *structs.Evaluation) error
	// CreateEval creates a follow-up: a delayed reschedule, a disconnect
	// timeout, a rolling-update wait, a blocked eval.
	CreateEval(eval *structs.Evaluation) error
	// ReblockEval puts a blocked eval that still cannot place back into
	// the blocked queue.
	ReblockEval(eval *structs.Evaluation) error
}

// Scheduler processes one evaluation.
type Scheduler interface {
	Process(eval *structs.Evaluation) error
}

// Config is what a scheduler is built from.
type Config struct {
	Logger  hclog.Logger
	State   State
	Planner Planner
	// Now is the only clock the scheduler reads.
	Now time.Time
	// Seed seeds node shuffling, port choice and new IDs; if 0 it is
	// derived from the eval ID and the snapshot index (so a post-mortem
	// can replay, and a later run of the same eval draws afresh).
	Seed int64
	// ReconnectReportWindow bounds how long an unknown alloc on a node
	// that is ready again waits for its client's report before it is lost
	// (reconciler.Input.ReportWindow); zero means
	// reconciler.DefaultReportWindow.
	ReconnectReportWindow time.Duration
}

// ErrUnknownScheduler is returned by NewScheduler for a job type no
// scheduler handles.
var ErrUnknownScheduler = errors.New("unknown scheduler")

// Plan attempts: how often a scheduler recomputes after the plan applier
// refused part of its plan before the eval fails. Batch work is cheaper to
// retry later than to fight for, so it gives up sooner.
const (
	maxServiceAttempts = 5
	maxBatchAttempts   = 2
	maxSystemAttempts  = 5
)

// NewScheduler returns the scheduler for a job type: "service" and "batch"
// get the generic scheduler, "system" and "sysbatch" the system scheduler.
func NewScheduler(jobType string, cfg Config) (Scheduler, error) {
	if cfg.State == nil || cfg.Planner == nil {
		return nil, fmt.Errorf("scheduler: %s: State and Planner are required", jobType)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	switch jobType {
	case structs.JobTypeService, structs.JobTypeBatch:
		return &genericScheduler{cfg: cfg, batch: jobType == structs.JobTypeBatch, logger: cfg.Logger.Named(jobType)}, nil
	case structs.JobTypeSystem, structs.JobTypeSysBatch:
		return &systemScheduler{cfg: cfg, sysbatch: jobType == structs.JobTypeSysBatch, logger: cfg.Logger.Named(jobType)}, nil
	}
	return nil, fmt.Errorf("scheduler: %w %q (want service, batch, system or sysbatch)", ErrUnknownScheduler, jobType)
}
