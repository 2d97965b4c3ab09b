package nomad

import (
	"time"
)

// The server's metrics carry Nomad's names (go-metrics puts "nomad." in
// front of each key below), so Nomad dashboards and alerts apply as they
// are. Each instrumentation point is one or two lines next to what it
// measures; the gauges that describe queues are emitted every
// StatsInterval by runStats, on every server (they are zero where the
// leader's queues are disabled), as Nomad does.
var (
	keyBrokerReady     = []string{"nomad", "broker", "total_ready"}
	keyBrokerUnacked   = []string{"nomad", "broker", "total_unacked"}
	keyBrokerPending   = []string{"nomad", "broker", "total_pending"}
	keyBrokerWaiting   = []string{"nomad", "broker", "total_waiting"}
	keyBrokerFailed    = []string{"nomad", "broker", "total_failed"}
	keyBlockedTotal    = []string{"nomad", "blocked_evals", "total_blocked"}
	keyPlanQueueDepth  = []string{"nomad", "plan", "queue_depth"}
	keyHeartbeatActive = []string{"nomad", "heartbeat", "active"}

	// The alloc-notice notifier's (Drover's): nodes registered for a
	// notice, notices due and not yet pushed, and pushes as they end.
	keyAllocNoticesRegistered = []string{"nomad", "alloc_notices", "registered"}
	keyAllocNoticesQueued     = []string{"nomad", "alloc_notices", "queued"}
	keyAllocNoticesPushed     = []string{"nomad", "alloc_notices", "pushed"}
	keyAllocNoticesPushFailed = []string{"nomad", "alloc_notices", "push_failed"}

	keyWorkerDequeue      = []string{"nomad", "worker", "dequeue_eval"}
	keyWorkerWaitForIndex = []string{"nomad", "worker", "wait_for_index"}
	keyWorkerSubmitPlan   = []string{"nomad", "worker", "submit_plan"}
	keyWorkerUpdateEval   = []string{"nomad", "worker", "update_eval"}
	// keyWorkerPlacementsFailed counts the placements the scheduler could
	// not make, as the evaluations it writes record them (Drover's).
	keyWorkerPlacementsFailed = []string{"nomad", "worker", "placements_failed"}

	keyClientUpdateStatus = []string{"nomad", "client", "update_status"}

	keyRPCRequest      = []string{"nomad", "rpc", "request"}
	keyRPCRequestError = []string{"nomad", "rpc", "request_error"}
	keyRPCQuery        = []string{"nomad", "rpc", "query"}
)

// invokeSchedulerKey is Nomad's per-type scheduler timer.
func invokeSchedulerKey(jobType string) []string {
	return []string{"nomad", "worker", "invoke_scheduler", jobType}
}

// emitStats sets the gauges of the server's queues and timers.
func (s *Server) emitStats() {
	m := s.metrics
	b := s.evalBroker.Stats()
	m.SetGauge(keyBrokerReady, float32(b.TotalReady))
	m.SetGauge(keyBrokerUnacked, float32(b.TotalUnacked))
	m.SetGauge(keyBrokerPending, float32(b.TotalBlocked))
	m.SetGauge(keyBrokerWaiting, float32(b.TotalWaiting))
	m.SetGauge(keyBrokerFailed, float32(b.TotalFailed))
	for sched, st := range b.ByScheduler {
		m.SetGauge([]string{"nomad", "broker", sched + "_ready"}, float32(st.Ready))
		m.SetGauge([]string{"nomad", "broker", sched + "_unacked"}, float32(st.Unacked))
	}
	m.SetGauge(keyBlockedTotal, float32(s.blockedEvals.Stats().TotalBlocked))
	m.SetGauge(keyPlanQueueDepth, float32(s.planQueue.Stats().Depth))
	m.SetGauge(keyHeartbeatActive, float32(s.heartbeats.Tracked()))
	s.emitNoticeStats()
}

// emitNoticeStats sets the alloc-notice notifier's gauges.
func (s *Server) emitNoticeStats() {
	if s.allocNotices == nil {
		return
	}
	st := s.allocNotices.stats()
	s.metrics.SetGauge(keyAllocNoticesRegistered, float32(st.Registered))
	s.metrics.SetGauge(keyAllocNoticesQueued, float32(st.Queued))
}

// runStats emits the gauges every StatsInterval until the server stops.
// It ticks in real time, not on the server's Clock: the gauges sample the
// present, and a test driving a clock.Fake must not find this loop's timer
// among the ones it waits for and advances.
func (s *Server) runStats() {
	interval := s.config.StatsInterval
	if interval <= 0 {
		interval = time.Second
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		s.emitStats()
		select {
		case <-s.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// observeRPC counts every RPC the server answers, and those that fail
// (rpcx.WithCallObserver).
func (s *Server) observeRPC(_ string, failed bool) {
	s.metrics.IncrCounter(keyRPCRequest, 1)
	if failed {
		s.metrics.IncrCounter(keyRPCRequestError, 1)
	}
}
