package api

import "strconv"

// SchedulerConfiguration is the cluster's scheduler configuration (GET
// and PUT /v1/operator/scheduler/configuration), in Nomad's shape.
type SchedulerConfiguration struct {
	// SchedulerAlgorithm is how placements choose among feasible nodes:
	// "binpack" (fill nodes up) or "spread" (use the emptiest).
	SchedulerAlgorithm SchedulerAlgorithm

	// PreemptionConfig says which job types may preempt lower-priority
	// work. Drover stores and returns it; it does not preempt yet.
	PreemptionConfig PreemptionConfig

	// MemoryOversubscriptionEnabled lets tasks use memory up to their
	// memory_max; when false, memory_max is ignored and tasks are limited
	// to the memory they reserve.
	MemoryOversubscriptionEnabled bool

	// RejectJobRegistration refuses job register, dispatch and scale
	// requests (Drover has no ACLs, so no token is exempt).
	RejectJobRegistration bool

	// PauseEvalBroker stops the leader from handing evaluations to
	// schedulers; evaluations still queue up and run once it is false.
	PauseEvalBroker bool

	// CreateIndex and ModifyIndex are the raft indexes of the first and
	// the latest change; ModifyIndex is what SchedulerCASConfiguration
	// checks.
	CreateIndex uint64
	ModifyIndex uint64
}

// SchedulerAlgorithm names a placement algorithm.
type SchedulerAlgorithm string

// The scheduler algorithms.
const (
	SchedulerAlgorithmBinpack SchedulerAlgorithm = "binpack"
	SchedulerAlgorithmSpread  SchedulerAlgorithm = "spread"
)

// PreemptionConfig says, per scheduler type, whether preemption is on.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// SchedulerConfigurationResponse answers SchedulerGetConfiguration.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
	QueryMeta
}

// SchedulerSetConfigurationResponse answers a configuration change.
// Updated is false only when a check-and-set found the configuration
// changed since it was read.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	WriteMeta
}

// SchedulerGetConfiguration reads the scheduler configuration. With
// q.WaitIndex it is a blocking query that answers once the configuration
// changes past that index.
func (o *Operator) SchedulerGetConfiguration(q *QueryOptions) (*SchedulerConfigurationResponse, *QueryMeta, error) {
	return queryOne[SchedulerConfigurationResponse](o.c, "/v1/operator/scheduler/configuration", q)
}

// SchedulerSetConfiguration replaces the scheduler configuration.
func (o *Operator) SchedulerSetConfiguration(conf *SchedulerConfiguration, w *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	return putOne[SchedulerSetConfigurationResponse](o.c, "/v1/operator/scheduler/configuration", conf, w)
}

// SchedulerCASConfiguration replaces the scheduler configuration only if
// its ModifyIndex is still conf.ModifyIndex (0: never set); otherwise it
// changes nothing and answers Updated=false.
func (o *Operator) SchedulerCASConfiguration(conf *SchedulerConfiguration, w *WriteOptions) (*SchedulerSetConfigurationResponse, *WriteMeta, error) {
	return putOne[SchedulerSetConfigurationResponse](o.c, "/v1/operator/scheduler/configuration?cas="+strconv.FormatUint(conf.ModifyIndex, 10), conf, w)
}
