package structs

import (
	"maps"
	"time"
)

// Evaluation statuses.
const (
	EvalStatusBlocked   = "blocked"
	EvalStatusPending   = "pending"
	EvalStatusComplete  = "complete"
	EvalStatusFailed    = "failed"
	EvalStatusCancelled = "canceled"
)

// What triggered an evaluation.
const (
	EvalTriggerJobRegister          = "job-register"
	EvalTriggerJobDeregister        = "job-deregister"
	EvalTriggerPeriodicJob          = "periodic-job"
	EvalTriggerNodeDrain            = "node-drain"
	EvalTriggerNodeUpdate           = "node-update"
	EvalTriggerAllocStop            = "alloc-stop"
	EvalTriggerScheduled            = "scheduled"
	EvalTriggerRollingUpdate        = "rolling-update"
	EvalTriggerDeploymentWatcher    = "deployment-watcher"
	EvalTriggerFailedFollowUp       = "failed-follow-up"
	EvalTriggerMaxPlans             = "max-plan-attempts"
	EvalTriggerRetryFailedAlloc     = "alloc-failure"
	EvalTriggerQueuedAllocs         = "queued-allocs"
	EvalTriggerPreemption           = "preemption"
	EvalTriggerScaling              = "job-scaling"
	EvalTriggerMaxDisconnectTimeout = "max-disconnect-timeout"
	EvalTriggerReconnect            = "reconnect"
	// EvalTriggerReconnectReportTimeout is the follow-up that acts when an
	// unknown alloc on a node that is ready again was not reported by its
	// client within the scheduler's report window: the alloc is then lost.
	EvalTriggerReconnectReportTimeout = "reconnect-report-timeout"
)

// Core (garbage collection) job IDs, run by the _core scheduler.
const (
	CoreJobEvalGC       = "eval-gc"
	CoreJobNodeGC       = "node-gc"
	CoreJobJobGC        = "job-gc"
	CoreJobDeploymentGC = "deployment-gc"
	CoreJobForceGC      = "force-gc"
)

// Evaluation is a request to reconcile a job's desired and actual state. It
// is created by whatever might change a scheduling decision (a job change, a
// node change, a failed alloc, a timer) and processed by exactly one worker.
type Evaluation struct {
	ID                   string
	Namespace            string
	Priority             int
	Type                 string
	TriggeredBy          string
	JobID                string
	JobModifyIndex       uint64
	NodeID               string
	NodeModifyIndex      uint64
	DeploymentID         string
	Status               string
	StatusDescription    string
	Wait                 time.Duration
	WaitUntil            time.Time
	NextEval             string
	PreviousEval         string
	BlockedEval          string
	RelatedEvals         []*EvaluationStub
	FailedTGAllocs       map[string]*AllocMetric
	ClassEligibility     map[string]bool
	EscapedComputedClass bool
	QuotaLimitReached    string
	AnnotatePlan         bool
	QueuedAllocations    map[string]int
	SnapshotIndex        uint64
	CreateIndex          uint64
	ModifyIndex          uint64
	CreateTime           int64
	ModifyTime           int64
}

// EvaluationStub is the short form of an eval.
type EvaluationStub struct {
	ID                string
	Namespace         string
	Priority          int
	Type              string
	TriggeredBy       string
	JobID             string
	NodeID            string
	DeploymentID      string
	Status            string
	StatusDescription string
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

// Stub returns the short form.
func (e *Evaluation) Stub() *EvaluationStub {
	return &EvaluationStub{
		ID: e.ID, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type, TriggeredBy: e.TriggeredBy,
		JobID: e.JobID, NodeID: e.NodeID, DeploymentID: e.DeploymentID, Status: e.Status,
		StatusDescription: e.StatusDescription, WaitUntil: e.WaitUntil, NextEval: e.NextEval,
		PreviousEval: e.PreviousEval, BlockedEval: e.BlockedEval, CreateIndex: e.CreateIndex,
		ModifyIndex: e.ModifyIndex, CreateTime: e.CreateTime, ModifyTime: e.ModifyTime,
	}
}

// TerminalStatus reports whether the eval is finished.
func (e *Evaluation) TerminalStatus() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCancelled:
		return true
	}
	return false
}

// ShouldEnqueue reports whether the eval belongs in the broker's ready queue.
func (e *Evaluation) ShouldEnqueue() bool { return e.Status == EvalStatusPending }

// ShouldBlock reports whether the eval belongs in BlockedEvals.
func (e *Evaluation) ShouldBlock() bool { return e.Status == EvalStatusBlocked }

// Copy returns a deep copy.
func (e *Evaluation) Copy() *Evaluation {
	if e == nil {
		return nil
	}
	c := *e
	if e.FailedTGAllocs != nil {
		c.FailedTGAllocs = make(map[string]*AllocMetric, len(e.FailedTGAllocs))
		for k, m := range e.FailedTGAllocs {
			c.FailedTGAllocs[k] = m.Copy()
		}
	}
	if e.ClassEligibility != nil {
		c.ClassEligibility = make(map[string]bool, len(e.ClassEligibility))
		for k, v := range e.ClassEligibility {
			c.ClassEligibility[k] = v
		}
	}
	if e.QueuedAllocations != nil {
		c.QueuedAllocations = make(map[string]int, len(e.QueuedAllocations))
		for k, v := range e.QueuedAllocations {
			c.QueuedAllocations[k] = v
		}
	}
	c.RelatedEvals = append([]*EvaluationStub(nil), e.RelatedEvals...)
	return &c
}

// NamespacedJobID returns the eval's job key.
func (e *Evaluation) NamespacedJobID() NamespacedID {
	return NamespacedID{ID: e.JobID, Namespace: e.Namespace}
}

// MakePlan starts a plan for this eval.
func (e *Evaluation) MakePlan(j *Job) *Plan {
	p := &Plan{
		EvalID:         e.ID,
		Priority:       e.Priority,
		Job:            j,
		NodeUpdate:     map[string][]*Allocation{},
		NodeAllocation: map[string][]*Allocation{},
	}
	if j != nil {
		p.AllAtOnce = j.AllAtOnce
	}
	return p
}

// NextRollingEval makes the follow-up eval for a rolling update that waits.
func (e *Evaluation) NextRollingEval(id string, wait time.Duration, now time.Time) *Evaluation {
	return &Evaluation{
		ID: id, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type,
		TriggeredBy: EvalTriggerRollingUpdate, JobID: e.JobID, JobModifyIndex: e.JobModifyIndex,
		Status: EvalStatusPending, Wait: wait, WaitUntil: now.Add(wait), PreviousEval: e.ID,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
}

// CreateBlockedEval makes the eval that waits for capacity after this one
// failed to place everything.
func (e *Evaluation) CreateBlockedEval(id string, classEligibility map[string]bool, escaped bool, now time.Time) *Evaluation {
	return &Evaluation{
		ID: id, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type,
		TriggeredBy: EvalTriggerQueuedAllocs, JobID: e.JobID, JobModifyIndex: e.JobModifyIndex,
		Status: EvalStatusBlocked, PreviousEval: e.ID, ClassEligibility: classEligibility,
		EscapedComputedClass: escaped, CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
}

// CreateFailedFollowUpEval makes the eval that retries a job after its eval
// hit the delivery limit, so no eval is silently dropped.
func (e *Evaluation) CreateFailedFollowUpEval(id string, wait time.Duration, now time.Time) *Evaluation {
	return &Evaluation{
		ID: id, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type,
		TriggeredBy: EvalTriggerFailedFollowUp, JobID: e.JobID, JobModifyIndex: e.JobModifyIndex,
		Status: EvalStatusPending, Wait: wait, WaitUntil: now.Add(wait), PreviousEval: e.ID,
		CreateTime: now.UnixNano(), ModifyTime: now.UnixNano(),
	}
}

// AllocMetric explains a placement decision: how many nodes were looked at
// and why each that was rejected was rejected. It is what lets the CLI say
// "3 nodes filtered by constraint ..., 2 exhausted on memory".
type AllocMetric struct {
	NodesEvaluated     int
	NodesFiltered      int
	NodesInPool        int
	NodesAvailable     map[string]int
	ClassFiltered      map[string]int
	ConstraintFiltered map[string]int
	NodesExhausted     int
	ClassExhausted     map[string]int
	DimensionExhausted map[string]int
	QuotaExhausted     []string
	ScoreMetaData      []*NodeScoreMeta
	AllocationTime     time.Duration
	CoalescedFailures  int
}

// NodeScoreMeta is one node's scores, for the top candidates.
type NodeScoreMeta struct {
	NodeID    string
	Scores    NodeScores
	NormScore float64
}

// Copy returns a deep copy. An AllocMetric attached to an allocation is
// never changed after the scheduler wrote it, so copies of the allocation
// share it (Allocation.CopySkipJob); Copy is for a caller that means to
// change a metric of its own.
func (m *AllocMetric) Copy() *AllocMetric {
	if m == nil {
		return nil
	}
	c := *m
	c.NodesAvailable = maps.Clone(m.NodesAvailable)
	c.ClassFiltered = maps.Clone(m.ClassFiltered)
	c.ConstraintFiltered = maps.Clone(m.ConstraintFiltered)
	c.ClassExhausted = maps.Clone(m.ClassExhausted)
	c.DimensionExhausted = maps.Clone(m.DimensionExhausted)
	c.QuotaExhausted = copyStrings(m.QuotaExhausted)
	if m.ScoreMetaData == nil {
		return &c
	}
	c.ScoreMetaData = make([]*NodeScoreMeta, len(m.ScoreMetaData))
	for i, s := range m.ScoreMetaData {
		sc := *s
		sc.Scores = s.Scores.Clone()
		c.ScoreMetaData[i] = &sc
	}
	return &c
}

// EvaluateNode counts a node looked at.
func (m *AllocMetric) EvaluateNode() { m.NodesEvaluated++ }

// FilterNode counts a node rejected by a constraint or check; class may be
// empty.
func (m *AllocMetric) FilterNode(class, reason string) {
	m.NodesFiltered++
	countIn(&m.ClassFiltered, class)
	countIn(&m.ConstraintFiltered, reason)
}

// ExhaustedNode counts a node without room on a dimension.
func (m *AllocMetric) ExhaustedNode(class, dimension string) {
	m.NodesExhausted++
	countIn(&m.ClassExhausted, class)
	countIn(&m.DimensionExhausted, dimension)
}

// countIn counts one more under key in *counts, made on first use; an
// empty key is not counted.
func countIn(counts *map[string]int, key string) {
	if key == "" {
		return
	}
	if *counts == nil {
		*counts = map[string]int{}
	}
	(*counts)[key]++
}
