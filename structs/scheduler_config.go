package structs

// SchedulerConfiguration is the cluster-wide scheduler setting, changed
// through raft.
type SchedulerConfiguration struct {
	SchedulerAlgorithm            string
	PreemptionConfig              PreemptionConfig
	MemoryOversubscriptionEnabled bool
	RejectJobRegistration         bool
	PauseEvalBroker               bool
	CreateIndex                   uint64
	ModifyIndex                   uint64
}

// DefaultSchedulerConfig is the configuration of a cluster nobody has
// configured yet.
func DefaultSchedulerConfig() *SchedulerConfiguration {
	return &SchedulerConfiguration{
		SchedulerAlgorithm: SchedulerAlgorithmBinpack,
		PreemptionConfig:   PreemptionConfig{SystemSchedulerEnabled: true},
	}
}

// Scheduler algorithms.
const (
	SchedulerAlgorithmBinpack = "binpack"
	SchedulerAlgorithmSpread  = "spread"
)

// PreemptionConfig says which schedulers may preempt.
type PreemptionConfig struct {
	SystemSchedulerEnabled   bool
	SysBatchSchedulerEnabled bool
	BatchSchedulerEnabled    bool
	ServiceSchedulerEnabled  bool
}

// EffectiveAlgorithm returns the algorithm, defaulting to binpack.
func (s *SchedulerConfiguration) EffectiveAlgorithm() string {
	if s == nil || s.SchedulerAlgorithm == "" {
		return SchedulerAlgorithmBinpack
	}
	return s.SchedulerAlgorithm
}

// Validate checks a configuration a user submits.
func (s *SchedulerConfiguration) Validate() error {
	p := newProblems()
	switch s.SchedulerAlgorithm {
	case "", SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread:
	default:
		p.add("SchedulerAlgorithm %q is not a scheduler algorithm; it must be %q or %q",
			s.SchedulerAlgorithm, SchedulerAlgorithmBinpack, SchedulerAlgorithmSpread)
	}
	return p.err()
}
