package api

import "time"

// Evaluation statuses.
const (
	EvalStatusBlocked   = "blocked"
	EvalStatusPending   = "pending"
	EvalStatusComplete  = "complete"
	EvalStatusFailed    = "failed"
	EvalStatusCancelled = "canceled"
)

// Evaluation is one request to reconcile a job's desired and actual state,
// and its outcome (GET /v1/evaluation/:id).
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
	FailedTGAllocs       map[string]*AllocationMetric
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

// TerminalStatus reports whether the evaluation is finished: complete,
// failed or cancelled. A blocked evaluation is not; it waits for capacity.
func (e *Evaluation) TerminalStatus() bool {
	switch e.Status {
	case EvalStatusComplete, EvalStatusFailed, EvalStatusCancelled:
		return true
	}
	return false
}

// EvaluationStub is the short form of an evaluation.
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

// AllocationMetric explains a placement: how many nodes were looked at and
// why each rejected one was rejected.
type AllocationMetric struct {
	NodesEvaluated int
	NodesFiltered  int
	NodesInPool    int
	NodePool       string

	// NodesAvailable counts ready nodes per datacenter.
	NodesAvailable map[string]int

	// ClassFiltered and ConstraintFiltered count nodes rejected by node
	// class and by each constraint, named as the constraint reads.
	ClassFiltered      map[string]int
	ConstraintFiltered map[string]int

	// NodesExhausted counts feasible nodes without room; ClassExhausted
	// and DimensionExhausted (by "memory", "cpu", "network: ...") say why.
	NodesExhausted     int
	ClassExhausted     map[string]int
	DimensionExhausted map[string]int
	QuotaExhausted     []string

	ScoreMetaData     []*NodeScoreMeta
	AllocationTime    time.Duration
	CoalescedFailures int
}

// NodeScoreMeta is one candidate node's scores.
type NodeScoreMeta struct {
	NodeID    string
	Scores    map[string]float64
	NormScore float64
}

// Evaluations is the /v1/evaluations and /v1/evaluation/:id family.
type Evaluations struct{ c *Client }

// Evaluations returns the evaluation endpoints.
func (c *Client) Evaluations() *Evaluations { return &Evaluations{c: c} }

// List lists evaluations (GET /v1/evaluations).
func (e *Evaluations) List(q *QueryOptions) ([]*Evaluation, *QueryMeta, error) {
	return queryList[*Evaluation](e.c, "/v1/evaluations", q)
}

// PrefixList lists evaluations whose ID starts with prefix.
func (e *Evaluations) PrefixList(prefix string) ([]*Evaluation, *QueryMeta, error) {
	return e.List(&QueryOptions{Prefix: prefix})
}

// Info reads one evaluation. As a blocking query (WaitIndex set) it is how
// `job run` watches an evaluation progress without polling.
func (e *Evaluations) Info(evalID string, q *QueryOptions) (*Evaluation, *QueryMeta, error) {
	return queryOne[Evaluation](e.c, "/v1/evaluation/"+escape(evalID), q)
}

// Allocations lists the allocations an evaluation created or changed.
func (e *Evaluations) Allocations(evalID string, q *QueryOptions) ([]*AllocationListStub, *QueryMeta, error) {
	return queryList[*AllocationListStub](e.c, "/v1/evaluation/"+escape(evalID)+"/allocations", q)
}
