package nomad

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/helper/telemetry"
	"github.com/drover-sched/drover/helper/telemetry/telemetrytest"
	"github.com/drover-sched/drover/nomad/broker"
	"github.com/drover-sched/drover/nomad/heartbeat"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/scheduler"
	"github.com/drover-sched/drover/structs"
)

// An eval's time from dequeue to ack is timed on the broker's clock, with
// its job's labels.
func TestMetricsBrokerTimesAnEvalFromDequeueToAck(t *testing.T) {
	m, sink := telemetrytest.New()
	clock := clock.NewFake(testEpoch)
	b, err := broker.NewEvalBroker(broker.EvalBrokerConfig{Clock: clock, NackTimeout: time.Hour, DeliveryLimit: 3, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	b.SetEnabled(true)
	e := testEval("web", 50, 10)
	b.Enqueue(e)
	got, token, err := b.Dequeue(context.Background(), []string{"service"})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(3 * time.Second)
	if n, _ := sink.Sample("nomad.nomad.broker.process_time"); n != 0 {
		t.Fatal("timed before the ack")
	}
	if err := b.Ack(got.ID, token); err != nil {
		t.Fatal(err)
	}
	n, max := sink.Sample("nomad.nomad.broker.process_time", "namespace", "default", "eval_type", "service", "triggered_by", structs.EvalTriggerJobRegister)
	if n != 1 || max != 3000 {
		t.Fatalf("process_time: %d samples, max %vms; want 1 of 3000ms", n, max)
	}
}

// Each gauge of the server's queues follows what is in the queue.
func TestMetricsQueueGaugesFollowTheirQueues(t *testing.T) {
	m, sink := telemetrytest.New()
	clock := clock.NewFake(testEpoch)
	b, err := broker.NewEvalBroker(broker.EvalBrokerConfig{Clock: clock, NackTimeout: time.Hour, DeliveryLimit: 3})
	if err != nil {
		t.Fatal(err)
	}
	blocked := broker.NewBlockedEvals(b, broker.BlockedEvalsConfig{Clock: clock})
	hb := heartbeat.New(heartbeat.Config{MinHeartbeatTTL: time.Minute, MaxHeartbeatsPerSecond: 50, Clock: clock, Rand: rand.New(rand.NewSource(1))})
	s := &Server{metrics: m, evalBroker: b, blockedEvals: blocked, planQueue: planner.NewQueue(), heartbeats: hb}
	b.SetEnabled(true)
	blocked.SetEnabled(true)
	s.planQueue.SetEnabled(true)
	hb.SetEnabled(true)
	defer hb.SetEnabled(false)

	gauge := func(name string) float32 {
		t.Helper()
		return emittedGauge(t, s.emitStats, sink, name)
	}
	web, api := testEval("web", 50, 10), testEval("api", 50, 11)
	for _, step := range []struct {
		cause string
		do    func()
		gauge string
		want  float32
	}{
		{"nothing queued", func() {}, "nomad.nomad.broker.total_ready", 0},
		{"two evals of two jobs enqueued", func() { b.Enqueue(web); b.Enqueue(api) }, "nomad.nomad.broker.total_ready", 2},
		{"the service scheduler's share", func() {}, "nomad.nomad.broker.service_ready", 2},
		{"a worker takes one", func() { _, _, _ = b.Dequeue(context.Background(), []string{"service"}) }, "nomad.nomad.broker.total_unacked", 1},
		{"the other is still ready", func() {}, "nomad.nomad.broker.total_ready", 1},
		// A job has one eval outstanding (ready or unacked); the next waits.
		{"a second eval of each job waits behind its first", func() { b.Enqueue(testEval("web", 50, 12)); b.Enqueue(testEval("api", 50, 13)) }, "nomad.nomad.broker.total_pending", 2},
		{"an eval that could not place is blocked", func() {
			e := testEval("db", 50, 14)
			e.Status = structs.EvalStatusBlocked
			blocked.Block(e)
		}, "nomad.nomad.blocked_evals.total_blocked", 1},
		{"a plan waits for the applier", func() {
			if _, err := s.planQueue.Enqueue(&structs.Plan{EvalID: "e1", Priority: 50}); err != nil {
				t.Fatal(err)
			}
		}, "nomad.nomad.plan.queue_depth", 1},
		{"a node heartbeats", func() { hb.ResetTTL("node-1", 1) }, "nomad.nomad.heartbeat.active", 1},
	} {
		step.do()
		if got := gauge(step.gauge); got != step.want {
			t.Fatalf("after %s: %s = %v, want %v", step.cause, step.gauge, got, step.want)
		}
	}
}

// A worker times its steps and counts the placements the scheduler
// recorded as failed.
func TestMetricsWorkerTimesItsStepsAndCountsFailedPlacements(t *testing.T) {
	m, sink := telemetrytest.New()
	f := newFakeWorkerServer(t)
	w := newWorker(context.Background(), f, []string{"service"}, 1, workerOptions{
		clock: clock.Real(), metrics: m,
		newScheduler: func(jobType string, cfg scheduler.Config) (scheduler.Scheduler, error) {
			return &standIn{cfg: cfg, process: func(cfg scheduler.Config, e *structs.Evaluation) error {
				done := e.Copy()
				done.Status = structs.EvalStatusComplete
				done.FailedTGAllocs = map[string]*structs.AllocMetric{"web": {CoalescedFailures: 2}, "db": {}}
				return cfg.Planner.UpdateEval(done)
			}}, nil
		},
	})
	t.Cleanup(func() {
		close(f.closed)
		w.Stop()
	})
	e := workerEval(0)
	f.evals <- &structs.EvalDequeueResponse{Eval: e, Token: "tok"}
	select {
	case <-f.acked:
	case <-time.After(10 * time.Second):
		t.Fatal("the eval was never acked")
	}
	if _, sum := sink.Counter("nomad.nomad.worker.placements_failed", "namespace", e.Namespace); sum != 4 {
		t.Fatalf("placements_failed = %v, want 4 (web: 1+2 coalesced, db: 1)", sum)
	}
	for _, timer := range []string{"nomad.nomad.worker.dequeue_eval", "nomad.nomad.worker.invoke_scheduler.service",
		"nomad.nomad.worker.wait_for_index", "nomad.nomad.worker.update_eval"} {
		if n, _ := sink.Sample(timer); n != 1 {
			t.Errorf("%s has %d samples after one eval, want 1", timer, n)
		}
	}
}

// Heartbeats are timed as Node.UpdateStatus, a missed TTL as an
// invalidation, and every RPC and blocking query is counted.
func TestMetricsHeartbeatsInvalidationsAndRPCs(t *testing.T) {
	m, sink := telemetrytest.New()
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := testServer(t, func(c *Config) {
		c.Clock = clock
		c.Metrics = m
		c.MinHeartbeatTTL = 10 * time.Second
		c.HeartbeatGrace = 5 * time.Second
	})
	WaitForLeader(t, 5*time.Second, s)

	requests, _ := sink.Counter("nomad.nomad.rpc.request")
	n := itNode("n1")
	registerNode(t, s, n)
	heartbeatNode(t, s, n)
	if c, _ := sink.Sample("nomad.nomad.client.update_status"); c != 1 {
		t.Fatalf("client.update_status has %d samples after one heartbeat, want 1", c)
	}
	if after, _ := sink.Counter("nomad.nomad.rpc.request"); after < requests+2 {
		t.Fatalf("rpc.request went from %d to %d over two calls", requests, after)
	}

	errs, _ := sink.Counter("nomad.nomad.rpc.request_error")
	var resp structs.NodeUpdateResponse
	if err := s.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{NodeID: n.ID, SecretID: "wrong", Status: "ready"}, &resp); err == nil {
		t.Fatal("a heartbeat with the wrong secret was accepted")
	}
	// The server's own calls count too, so "at least one more".
	if after, _ := sink.Counter("nomad.nomad.rpc.request_error"); after < errs+1 {
		t.Fatalf("rpc.request_error went from %d to %d over one failed call", errs, after)
	}

	queries, _ := sink.Counter("nomad.nomad.rpc.query")
	var out structs.SingleNodeResponse
	if err := s.RPC("Node.GetNode", &structs.NodeSpecificRequest{NodeID: n.ID, SecretID: n.SecretID, QueryOptions: structs.QueryOptions{Region: "global"}}, &out); err != nil {
		t.Fatal(err)
	}
	if after, _ := sink.Counter("nomad.nomad.rpc.query"); after < queries+1 {
		t.Fatalf("rpc.query went from %d to %d over one query", queries, after)
	}

	if c, _ := sink.Sample("nomad.nomad.heartbeat.invalidate"); c != 0 {
		t.Fatal("an invalidation timed before any TTL passed")
	}
	clock.Advance(26 * time.Second) // past 2x10s TTL + 5s grace
	WaitFor(t, 10*time.Second, func() (bool, string) {
		c, _ := sink.Sample("nomad.nomad.heartbeat.invalidate")
		return c == 1, fmt.Sprintf("%d invalidations timed, node %s", c, nodeStatus(s, n.ID))
	})
	if st := nodeStatus(s, n.ID); st != structs.NodeStatusDown {
		t.Fatalf("invalidation timed but the node is %s", st)
	}
}

// hashicorp/raft's own metrics reach an agent that bridges them: commit
// time on every write, and the leader's last contact with its followers.
func TestMetricsRaftCommitTimeAndLastContact(t *testing.T) {
	tel, err := telemetry.New(telemetry.Config{DisableHostname: true}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Shutdown()
	tel.BridgeRaft()
	var servers []*Server
	for i := 0; i < 3; i++ {
		servers = append(servers, testServer(t, func(c *Config) {
			c.BootstrapExpect = 3
			c.NodeName = fmt.Sprintf("s%d", i)
			c.Metrics = tel.Metrics()
		}))
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	leader := WaitForLeader(t, 30*time.Second, servers...)
	registerNode(t, leader, itNode("n1"))
	WaitFor(t, 30*time.Second, func() (bool, string) {
		commit, contact := samples(tel, "nomad.raft.commitTime"), samples(tel, "nomad.raft.leader.lastContact")
		return commit > 0 && contact > 0, fmt.Sprintf("commitTime %d samples, leader.lastContact %d", commit, contact)
	})
}

// samples counts a sample over every retained interval of tel.
func samples(tel *telemetry.Telemetry, name string) int {
	n := 0
	for _, iv := range tel.Intervals() {
		iv.RLock()
		for _, s := range iv.Samples {
			if s.Name == name {
				n += s.Count
			}
		}
		iv.RUnlock()
	}
	return n
}

// emittedGauge runs emit, then returns the gauge name it set, failing the
// test if it set none.
func emittedGauge(t *testing.T, emit func(), sink *telemetrytest.Sink, name string) float32 {
	t.Helper()
	emit()
	v, ok := sink.Gauge(name)
	if !ok {
		t.Fatalf("%s never set", name)
	}
	return v
}
