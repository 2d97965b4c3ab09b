package structs

import "time"

// EvalUpdateRequest upserts evaluations (a worker finishing one, or
// creating follow-ups). EvalToken proves the worker still owns the eval.
type EvalUpdateRequest struct {
	Evals     []*Evaluation
	EvalToken string
	WriteRequest
}

// EvalDeleteRequest deletes evaluations and allocations (GC).
type EvalDeleteRequest struct {
	Evals  []string
	Allocs []string
	// KeepEvalsWithAllocs keeps an eval of Evals while any alloc of it is
	// left after this entry. Core GC sets it: it spreads the allocs of a
	// very large eval over several bounded entries and names the eval in
	// the last, and an alloc an earlier entry had to keep must keep its
	// eval. Entries written before the field existed decode it as false
	// and apply as they always did.
	KeepEvalsWithAllocs bool
	WriteRequest
}

// EvalDequeueRequest asks the leader's broker for work.
type EvalDequeueRequest struct {
	Schedulers       []string
	Timeout          time.Duration
	SchedulerVersion uint16
	WriteRequest
}

// IsLongPoll reports that a dequeue waits for work, so the RPC pool sends
// it on its long-poll session.
func (e *EvalDequeueRequest) IsLongPoll() bool { return e.Timeout > 0 }

// EvalDequeueResponse hands a worker an eval; WaitIndex is the state index
// the worker must reach before scheduling it.
type EvalDequeueResponse struct {
	Eval      *Evaluation
	Token     string
	WaitIndex uint64
	QueryMeta
}

// GetWaitIndex returns the index to wait for.
func (e *EvalDequeueResponse) GetWaitIndex() uint64 {
	if e.Eval != nil && e.Eval.ModifyIndex > e.WaitIndex {
		return e.Eval.ModifyIndex
	}
	return e.WaitIndex
}

// EvalAckRequest acks or nacks an eval.
type EvalAckRequest struct {
	EvalID string
	Token  string
	WriteRequest
}

// EvalSpecificRequest names one eval.
type EvalSpecificRequest struct {
	EvalID         string
	IncludeRelated bool
	QueryOptions
}

// SingleEvalResponse answers a lookup of one eval.
type SingleEvalResponse struct {
	Eval *Evaluation
	QueryMeta
}

// EvalListRequest lists evals, optionally filtered.
type EvalListRequest struct {
	FilterJobID      string
	FilterEvalStatus string
	QueryOptions
}

// EvalListResponse answers EvalListRequest.
type EvalListResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// EvalAllocationsResponse lists an eval's allocations.
type EvalAllocationsResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// BrokerStats counts the broker's queues, per scheduler type too.
type BrokerStats struct {
	TotalReady   int
	TotalUnacked int
	TotalBlocked int
	TotalWaiting int
	TotalFailed  int
	DelayedEvals map[string]*Evaluation
	ByScheduler  map[string]*SchedulerStats
}

// SchedulerStats counts one scheduler type's queues.
type SchedulerStats struct {
	Ready   int
	Unacked int
}

// PlanRequest submits a plan to the leader.
type PlanRequest struct {
	Plan *Plan
	WriteRequest
}

// PlanResponse carries the applier's result.
type PlanResponse struct {
	Result *PlanResult
	WriteMeta
}

// ApplyPlanResultsRequest is the raft entry for a committed plan: the
// allocations to upsert (placements, updates, stops, lost and unknown
// marks), the deployment changes, and the evals to create, all with times
// and IDs chosen before the entry was made.
type ApplyPlanResultsRequest struct {
	AllocsUpdated     []*Allocation
	AllocsStopped     []*Allocation
	Job               *Job
	Deployment        *Deployment
	DeploymentUpdates []*DeploymentStatusUpdate
	EvalID            string
	PreemptionEvals   []*Evaluation
	UpdatedAt         int64
	WriteRequest
}

// DeploymentStatusUpdateRequest changes a deployment (and may register a
// job version and eval, for auto-revert).
type DeploymentStatusUpdateRequest struct {
	Eval             *Evaluation
	DeploymentUpdate *DeploymentStatusUpdate
	Job              *Job
	// UpdatedAt is the leader's clock when the entry was made: the
	// deployment's ModifyTime.
	UpdatedAt int64
	WriteRequest
}

// DeploymentDeleteRequest deletes deployments (GC).
type DeploymentDeleteRequest struct {
	Deployments []string
	WriteRequest
}

// SchedulerSetConfigRequest changes the scheduler configuration; with CAS
// only if its ModifyIndex still matches.
type SchedulerSetConfigRequest struct {
	Config SchedulerConfiguration
	CAS    bool
	WriteRequest
}

// SchedulerSetConfigurationResponse answers a configuration change, as
// Nomad's does: Updated is false only when a check-and-set found the
// configuration changed since the caller read it; Index is the raft index
// of the write (attempted or not).
type SchedulerSetConfigurationResponse struct {
	Updated bool
	WriteMeta
}

// SchedulerConfigurationResponse answers a configuration read.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
	QueryMeta
}

// DeploymentListResponse lists deployments.
type DeploymentListResponse struct {
	Deployments []*Deployment
	QueryMeta
}

// DeploymentSpecificRequest names a deployment.
type DeploymentSpecificRequest struct {
	DeploymentID string
	QueryOptions
}
