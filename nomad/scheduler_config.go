package nomad

import (
	"github.com/drover-sched/drover/acl"
	"github.com/drover-sched/drover/structs"
)

// The cluster's scheduler configuration lives in raft (state's
// scheduler_config table). This file holds what the server does with it
// besides storing it: the first leader stores the configured default, the
// leader's eval broker follows PauseEvalBroker, and job registrations are
// refused while RejectJobRegistration is set. The scheduler reads the
// algorithm and MemoryOversubscriptionEnabled itself, from its snapshot.

// defaultSchedulerConfig is the configuration a cluster starts with: the
// agent's server.default_scheduler_config, or Nomad's defaults.
func (s *Server) defaultSchedulerConfig() *structs.SchedulerConfiguration {
	cfg := structs.DefaultSchedulerConfig()
	if s.config.DefaultSchedulerConfig != nil {
		c := *s.config.DefaultSchedulerConfig
		cfg = &c
	}
	canonicalizeSchedulerConfig(cfg)
	cfg.CreateIndex, cfg.ModifyIndex = 0, 0
	return cfg
}

// canonicalizeSchedulerConfig spells out what an empty field means, so a
// read never shows an empty algorithm.
func canonicalizeSchedulerConfig(cfg *structs.SchedulerConfiguration) {
	cfg.SchedulerAlgorithm = cfg.EffectiveAlgorithm()
}

// bootstrapSchedulerConfig stores the default configuration when the
// cluster has none yet, once per cluster: the leader calls it on gaining
// leadership, after its state has caught up. The write is a check-and-set
// against "nothing stored", so it can never overwrite a configuration an
// operator (or an earlier leader) stored. It goes through raft like any
// write; the FSM only stores what the entry carries.
func (s *Server) bootstrapSchedulerConfig() error {
	idx, _, err := s.State().SchedulerConfig()
	if err != nil || idx != 0 {
		return err
	}
	req := &structs.SchedulerSetConfigRequest{Config: *s.defaultSchedulerConfig(), CAS: true}
	_, resp, err := s.raftApplyUntilShutdown(structs.SchedulerConfigRequestType, req)
	if err != nil {
		return err
	}
	if stored, _ := resp.(bool); stored {
		s.logger.Info("stored the default scheduler configuration", "algorithm", req.Config.SchedulerAlgorithm,
			"pause_eval_broker", req.Config.PauseEvalBroker, "reject_job_registration", req.Config.RejectJobRegistration)
	}
	return nil
}

// raftApplyUntilShutdown is raftApply for leader setup: it stops waiting
// when the server shuts down, so Shutdown (which waits for the leadership
// loop before it stops raft) is never held up by a commit that cannot
// happen any more. The apply itself is left to raft, which resolves it when
// it shuts down.
func (s *Server) raftApplyUntilShutdown(t structs.MessageType, msg any) (uint64, any, error) {
	type result struct {
		idx  uint64
		resp any
		err  error
	}
	done := make(chan result, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		idx, resp, err := s.raftApply(t, msg)
		done <- result{idx, resp, err}
	}()
	select {
	case r := <-done:
		return r.idx, r.resp, r.err
	case <-s.ctx.Done():
		return 0, nil, s.ctx.Err()
	}
}

// syncEvalBrokerPause makes the eval broker's pause follow the stored
// PauseEvalBroker (the configured default while nothing is stored yet).
// The leader calls it on gaining leadership, before the broker hands out
// anything, and after every configuration change it applies. A follower's
// broker is disabled, so its pause does not matter until it leads, when
// it is synced again.
func (s *Server) syncEvalBrokerPause() error {
	return s.evalBroker.SyncPaused(func() (bool, error) {
		idx, cfg, err := s.State().SchedulerConfig()
		if err != nil {
			return false, err
		}
		if idx == 0 {
			return s.defaultSchedulerConfig().PauseEvalBroker, nil
		}
		return cfg.PauseEvalBroker, nil
	})
}

// checkJobRegistrationAllowed refuses job register and scale while the
// configuration's RejectJobRegistration is set, so operators can shed
// load from automated submitters during an incident. a is the caller's
// ACL: as in Nomad, a management token is exempt when ACLs are on, and
// with ACLs off (a nil ACL) every caller is refused. Work the servers
// start themselves (periodic launches) is not refused, as in Nomad.
func (s *Server) checkJobRegistrationAllowed(a *acl.ACL) error {
	if isExemptManagement(a) {
		return nil
	}
	_, cfg, err := s.State().SchedulerConfig()
	if err != nil {
		return err
	}
	if cfg.RejectJobRegistration {
		return structs.ErrJobRegistrationDisabled
	}
	return nil
}
