package nomad

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
	"github.com/google/go-cmp/cmp"
)

func getSchedulerConfig(t *testing.T, s *Server, q structs.QueryOptions) *structs.SchedulerConfigurationResponse {
	t.Helper()
	var resp structs.SchedulerConfigurationResponse
	if err := s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{QueryOptions: q}, &resp); err != nil {
		t.Fatalf("reading the scheduler configuration from %s: %v", s.config.NodeName, err)
	}
	if resp.SchedulerConfig == nil {
		t.Fatalf("%s answered no scheduler configuration", s.config.NodeName)
	}
	return &resp
}

func setSchedulerConfig(s *Server, cfg structs.SchedulerConfiguration, cas bool) (*structs.SchedulerSetConfigurationResponse, error) {
	var resp structs.SchedulerSetConfigurationResponse
	err := s.RPC("Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: cfg, CAS: cas}, &resp)
	return &resp, err
}

func mustSetSchedulerConfig(t *testing.T, s *Server, cfg structs.SchedulerConfiguration) *structs.SchedulerSetConfigurationResponse {
	t.Helper()
	resp, err := setSchedulerConfig(s, cfg, false)
	if err != nil {
		t.Fatalf("setting the scheduler configuration through %s: %v", s.config.NodeName, err)
	}
	if !resp.Updated || resp.Index == 0 {
		t.Fatalf("a plain set must be applied: %+v", resp)
	}
	return resp
}

// withoutIndexes compares configurations by their settings.
func withoutIndexes(c structs.SchedulerConfiguration) structs.SchedulerConfiguration {
	c.CreateIndex, c.ModifyIndex = 0, 0
	return c
}

// A new cluster's leader stores Nomad's defaults through raft, so they
// are read back with a real index and CAS works against it.
func TestSchedulerConfigNewClusterStoresNomadDefaults(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	resp := getSchedulerConfig(t, s, structs.QueryOptions{})
	want := structs.SchedulerConfiguration{
		SchedulerAlgorithm: structs.SchedulerAlgorithmBinpack,
		PreemptionConfig:   structs.PreemptionConfig{SystemSchedulerEnabled: true},
	}
	if diff := cmp.Diff(want, withoutIndexes(*resp.SchedulerConfig)); diff != "" {
		t.Fatalf("defaults (-want +got):\n%s", diff)
	}
	c := resp.SchedulerConfig
	if c.CreateIndex == 0 || c.ModifyIndex != c.CreateIndex || resp.Index != c.ModifyIndex || !resp.KnownLeader {
		t.Fatalf("the defaults must be stored through raft at one index: config %+v, meta %+v", c, resp.QueryMeta)
	}
	if s.evalBroker.Paused() {
		t.Fatal("the broker must not be paused by default")
	}
}

// server.default_scheduler_config is what a new cluster starts with,
// pause included; a restarted server keeps the stored configuration even
// if its default changed meanwhile.
func TestSchedulerConfigDefaultIsStoredOnceAndHonoured(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread, PauseEvalBroker: true,
		MemoryOversubscriptionEnabled: true, PreemptionConfig: structs.PreemptionConfig{BatchSchedulerEnabled: true}}
	s1 := testServer(t, func(c *Config) { c.DataDir = dir; c.DefaultSchedulerConfig = &first })
	WaitForLeader(t, 5*time.Second, s1)
	got := getSchedulerConfig(t, s1, structs.QueryOptions{}).SchedulerConfig
	if diff := cmp.Diff(first, withoutIndexes(*got)); diff != "" {
		t.Fatalf("not the configured default (-want +got):\n%s", diff)
	}
	if !s1.evalBroker.Paused() {
		t.Fatal("a default with pause_eval_broker must pause the leader's broker")
	}
	addr := s1.RPCAddr()
	if err := s1.Shutdown(); err != nil {
		t.Fatal(err)
	}

	second := structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmBinpack}
	s2 := testServer(t, func(c *Config) { c.DataDir = dir; c.RPCAddr = addr; c.DefaultSchedulerConfig = &second })
	WaitForLeader(t, 5*time.Second, s2)
	again := getSchedulerConfig(t, s2, structs.QueryOptions{}).SchedulerConfig
	if diff := cmp.Diff(got, again); diff != "" {
		t.Fatalf("a stored configuration must survive a restart unchanged (-before +after):\n%s", diff)
	}
	if !s2.evalBroker.Paused() {
		t.Fatal("the restarted leader must honour the stored pause")
	}
}

// A set sent to a follower is forwarded to the leader, applied through
// raft and replicated to every server. The set is sent again if an
// election loses its answer (see election_helpers_test.go).
func TestSchedulerSetConfigForwardsFromAFollower(t *testing.T) {
	servers := startCluster(t, 3)
	leader := WaitForLeader(t, 10*time.Second, servers...)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
			break
		}
	}
	want := structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread, MemoryOversubscriptionEnabled: true,
		PreemptionConfig: structs.PreemptionConfig{ServiceSchedulerEnabled: true, SystemSchedulerEnabled: true}}
	var resp structs.SchedulerSetConfigurationResponse
	writeThroughElections(t, follower, "Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{Config: want}, &resp)
	if !resp.Updated || resp.Index == 0 {
		t.Fatalf("a plain set must be applied: %+v", resp)
	}
	for _, s := range servers {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			idx, got, err := s.State().SchedulerConfig()
			if err != nil {
				return false, err.Error()
			}
			return idx >= resp.Index && withoutIndexes(*got) == want && got.ModifyIndex == resp.Index,
				fmt.Sprintf("%s has %+v at index %d", s.config.NodeName, got, idx)
		})
	}
	// A read through the follower is answered by the leader.
	if got := getSchedulerConfig(t, follower, structs.QueryOptions{}); withoutIndexes(*got.SchedulerConfig) != want || got.Index != resp.Index {
		t.Fatalf("read through the follower: %+v at %d", got.SchedulerConfig, got.Index)
	}
}

// A check-and-set applies only against the index the caller read; a stale
// one answers Updated=false and changes nothing.
func TestSchedulerSetConfigCheckAndSet(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	before := getSchedulerConfig(t, s, structs.QueryOptions{}).SchedulerConfig

	stale := structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread, ModifyIndex: before.ModifyIndex + 100}
	resp, err := setSchedulerConfig(s, stale, true)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Updated {
		t.Fatalf("a check-and-set against index %d must fail (stored %d)", stale.ModifyIndex, before.ModifyIndex)
	}
	if diff := cmp.Diff(before, getSchedulerConfig(t, s, structs.QueryOptions{}).SchedulerConfig); diff != "" {
		t.Fatalf("a failed check-and-set changed the configuration (-before +after):\n%s", diff)
	}

	current := stale
	current.ModifyIndex = before.ModifyIndex
	resp, err = setSchedulerConfig(s, current, true)
	if err != nil || !resp.Updated {
		t.Fatalf("a check-and-set against the stored index must apply: %+v %v", resp, err)
	}
	after := getSchedulerConfig(t, s, structs.QueryOptions{}).SchedulerConfig
	if after.SchedulerAlgorithm != structs.SchedulerAlgorithmSpread || after.ModifyIndex != resp.Index || after.CreateIndex != before.CreateIndex {
		t.Fatalf("after a check-and-set at %d: %+v", resp.Index, after)
	}
	// The index it used is stale now.
	if resp, err := setSchedulerConfig(s, current, true); err != nil || resp.Updated {
		t.Fatalf("a second check-and-set with the same index must fail: %+v %v", resp, err)
	}
}

// An invalid configuration is refused with an error naming the field and
// the allowed values, and nothing is written.
func TestSchedulerSetConfigRefusesAnUnknownAlgorithm(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	before := getSchedulerConfig(t, s, structs.QueryOptions{})
	latest, err := s.State().LatestIndex()
	if err != nil {
		t.Fatal(err)
	}
	for _, cas := range []bool{false, true} {
		_, err := setSchedulerConfig(s, structs.SchedulerConfiguration{SchedulerAlgorithm: "round-robin", PauseEvalBroker: true,
			ModifyIndex: before.SchedulerConfig.ModifyIndex}, cas)
		if err == nil {
			t.Fatal("an unknown algorithm must be refused")
		}
		for _, want := range []string{"bad request", "SchedulerAlgorithm", `"round-robin"`, `"binpack"`, `"spread"`} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q should contain %s", err, want)
			}
		}
	}
	after := getSchedulerConfig(t, s, structs.QueryOptions{})
	if diff := cmp.Diff(before.SchedulerConfig, after.SchedulerConfig); diff != "" || after.Index != before.Index {
		t.Fatalf("a refused change altered the configuration at index %d -> %d (-before +after):\n%s", before.Index, after.Index, diff)
	}
	if now, _ := s.State().LatestIndex(); now != latest {
		t.Fatalf("a refused change wrote to raft: latest index %d -> %d", latest, now)
	}
	if s.evalBroker.Paused() {
		t.Fatal("a refused change must not pause the broker")
	}
}

// The read is a blocking query: it waits for a change past the index it
// is given and answers the new configuration.
func TestSchedulerGetConfigBlocksUntilAChange(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	first := getSchedulerConfig(t, s, structs.QueryOptions{})

	// Nothing changes: the wait runs out and the same index comes back.
	same := getSchedulerConfig(t, s, structs.QueryOptions{MinQueryIndex: first.Index, MaxQueryTime: 50 * time.Millisecond})
	if same.Index != first.Index || *same.SchedulerConfig != *first.SchedulerConfig {
		t.Fatalf("a timed-out blocking read: %+v at %d", same.SchedulerConfig, same.Index)
	}

	done := make(chan *structs.SchedulerConfigurationResponse, 1)
	go func() {
		var resp structs.SchedulerConfigurationResponse
		err := s.RPC("Operator.SchedulerGetConfiguration", &structs.GenericRequest{QueryOptions: structs.QueryOptions{
			MinQueryIndex: first.Index, MaxQueryTime: time.Minute}}, &resp)
		if err != nil {
			resp.SchedulerConfig = nil
		}
		done <- &resp
	}()
	set := mustSetSchedulerConfig(t, s, structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread})
	select {
	case got := <-done:
		if got.SchedulerConfig == nil || got.SchedulerConfig.SchedulerAlgorithm != structs.SchedulerAlgorithmSpread || got.Index != set.Index {
			t.Fatalf("the blocking read answered %+v at %d, want spread at %d", got.SchedulerConfig, got.Index, set.Index)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking read did not return after the change")
	}
}

// PauseEvalBroker stops the leader handing out evals while they keep
// arriving; unpausing hands them out again, to a Dequeue already waiting
// as well as to the scheduler workers, which then place the job.
func TestSchedulerConfigPauseEvalBrokerStopsAndResumesDequeues(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	WaitForLeader(t, 5*time.Second, s)
	mustSetSchedulerConfig(t, s, structs.SchedulerConfiguration{PauseEvalBroker: true})
	if !s.evalBroker.Paused() {
		t.Fatal("the leader's broker must pause once the change is applied")
	}
	registerNode(t, s, itNode("n1"))
	reg := registerJob(t, s, itJob("web", 2))

	dequeue := func(timeout time.Duration) (*structs.EvalDequeueResponse, error) {
		var resp structs.EvalDequeueResponse
		err := s.RPC("Eval.Dequeue", &structs.EvalDequeueRequest{Schedulers: []string{structs.JobTypeService}, Timeout: timeout}, &resp)
		return &resp, err
	}
	// The eval is in the broker, ready, but nobody gets it.
	if st := s.evalBroker.Stats(); st.TotalReady != 1 || st.TotalUnacked != 0 {
		t.Fatalf("while paused the eval must wait ready in the broker: %+v", st)
	}
	if resp, err := dequeue(50 * time.Millisecond); err != nil || resp.Eval != nil {
		t.Fatalf("a paused broker handed out %+v (%v)", resp.Eval, err)
	}
	if got := evalStatus(t, s, reg.EvalID); got != structs.EvalStatusPending {
		t.Fatalf("eval status %q while paused, want pending", got)
	}

	// A Dequeue waiting when the broker resumes gets the eval.
	got := make(chan *structs.EvalDequeueResponse, 1)
	go func() {
		resp, err := dequeue(10 * time.Second)
		if err != nil {
			resp = &structs.EvalDequeueResponse{}
		}
		got <- resp
	}()
	mustSetSchedulerConfig(t, s, structs.SchedulerConfiguration{PauseEvalBroker: false})
	if s.evalBroker.Paused() {
		t.Fatal("the broker must resume once the change is applied")
	}
	select {
	case resp := <-got:
		if resp.Eval == nil || resp.Eval.ID != reg.EvalID {
			t.Fatalf("after resuming, dequeue got %+v, want eval %s", resp.Eval, reg.EvalID)
		}
		var ack structs.GenericResponse
		if err := s.RPC("Eval.Nack", &structs.EvalAckRequest{EvalID: resp.Eval.ID, Token: resp.Token}, &ack); err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a waiting dequeue was not woken by the resume")
	}
}

// The full pipeline: a paused cluster schedules nothing until resumed,
// and then places what was registered meanwhile.
func TestSchedulerConfigPausedClusterPlacesAfterResume(t *testing.T) {
	s := testServer(t, func(c *Config) {
		c.NumSchedulers = 1
		c.DefaultSchedulerConfig = &structs.SchedulerConfiguration{PauseEvalBroker: true}
	})
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	reg := registerJob(t, s, itJob("web", 3))
	if st := s.evalBroker.Stats(); st.TotalReady != 1 || st.TotalUnacked != 0 || len(jobAllocs(t, s, "web")) != 0 {
		t.Fatalf("a paused broker let the worker take the eval: %+v", st)
	}
	mustSetSchedulerConfig(t, s, structs.SchedulerConfiguration{})
	WaitFor(t, 20*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		return len(live) == 3 && evalStatus(t, s, reg.EvalID) == structs.EvalStatusComplete,
			fmt.Sprintf("%d allocs, eval %s", len(live), evalStatus(t, s, reg.EvalID))
	})
}

// A new leader pauses its broker if the stored configuration says so,
// and a resume through it takes effect there.
//
// Raft may move leadership on its own while the test runs (see
// election_helpers_test.go), so writes are sent again when an election
// loses their answer, and the broker looked at is the one of whichever
// server has established leadership at that moment.
func TestSchedulerConfigNewLeaderHonoursTheStoredPause(t *testing.T) {
	t.Parallel()
	servers := startCluster(t, 3)
	var resp structs.SchedulerSetConfigurationResponse
	writeThroughElections(t, WaitForLeader(t, 10*time.Second, servers...), "Operator.SchedulerSetConfiguration",
		&structs.SchedulerSetConfigRequest{Config: structs.SchedulerConfiguration{PauseEvalBroker: true}}, &resp)
	if !resp.Updated || resp.Index == 0 {
		t.Fatalf("a plain set must be applied: %+v", resp)
	}
	leader := WaitForLeader(t, 10*time.Second, servers...)
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	// Both survivors must have the entry before the leader goes, so
	// whichever wins the election has it.
	for _, s := range rest {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			idx, _, _ := s.State().SchedulerConfig()
			return idx >= resp.Index, fmt.Sprintf("%s at scheduler config index %d", s.config.NodeName, idx)
		})
	}
	if err := leader.Shutdown(); err != nil {
		t.Fatal(err)
	}
	next, b := establishedLeader(t, rest)
	if !b.enabled || !b.paused {
		t.Fatalf("new leader %s's broker: enabled %v paused %v, want enabled and paused", next.config.NodeName, b.enabled, b.paused)
	}
	resp = structs.SchedulerSetConfigurationResponse{}
	writeThroughElections(t, next, "Operator.SchedulerSetConfiguration", &structs.SchedulerSetConfigRequest{}, &resp)
	if !resp.Updated {
		t.Fatalf("a plain set must be applied: %+v", resp)
	}
	// The leader that applied the resume unpaused its broker before it
	// answered; a leader elected since read the resume from state.
	if next, b = establishedLeader(t, rest); b.paused {
		t.Fatalf("a resume must unpause the leader's broker: %s's is paused", next.config.NodeName)
	}
}

// brokerState is what a leader's eval broker was doing at one moment.
type brokerState struct{ enabled, paused bool }

// establishedLeader waits until one of servers has established
// leadership and returns it with its broker's state, read under leaderMu
// so that a revoke cannot interleave: revokeLeadership clears leaderReady
// under leaderMu before it disables the broker, so a broker read while
// leaderReady holds is the established leader's.
func establishedLeader(t *testing.T, servers []*Server) (*Server, brokerState) {
	t.Helper()
	var b brokerState
	s := waitForLeaderWhere(t, 15*time.Second, servers, "that has established leadership", func(s *Server) bool {
		s.leaderMu.Lock()
		defer s.leaderMu.Unlock()
		if s.leaderCancel == nil || !s.leaderReady.Load() {
			return false
		}
		b = brokerState{enabled: s.evalBroker.Enabled(), paused: s.evalBroker.Paused()}
		return true
	})
	return s, b
}

// RejectJobRegistration refuses registrations (and reverts, which
// register) from every caller, since Drover has no ACL tokens to exempt,
// and writes nothing; turning it off lets them through again.
func TestSchedulerConfigRejectJobRegistration(t *testing.T) {
	// No workers: nothing but the requests under test writes to raft.
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	WaitForLeader(t, 5*time.Second, s)
	registerJob(t, s, itJob("web", 1))
	first := registerJob(t, s, itJob("web", 2)) // version 1, so there is one to revert to
	mustSetSchedulerConfig(t, s, structs.SchedulerConfiguration{RejectJobRegistration: true})
	latest, err := s.State().LatestIndex()
	if err != nil {
		t.Fatal(err)
	}

	var resp structs.JobRegisterResponse
	err = s.RPC("Job.Register", &structs.JobRegisterRequest{Job: itJob("api", 1)}, &resp)
	if !errors.Is(err, structs.ErrJobRegistrationDisabled) {
		t.Fatalf("register while rejecting: got %v, want %v", err, structs.ErrJobRegistrationDisabled)
	}
	if !strings.Contains(err.Error(), "RejectJobRegistration") {
		t.Errorf("the error should name the setting: %v", err)
	}
	update := itJob("web", 5)
	err = s.RPC("Job.Register", &structs.JobRegisterRequest{Job: update}, &resp)
	if !errors.Is(err, structs.ErrJobRegistrationDisabled) {
		t.Fatalf("updating a job while rejecting: got %v", err)
	}
	err = s.RPC("Job.Revert", &structs.JobRevertRequest{JobID: "web", JobVersion: 0}, &resp)
	if !errors.Is(err, structs.ErrJobRegistrationDisabled) {
		t.Fatalf("revert while rejecting: got %v", err)
	}
	if now, _ := s.State().LatestIndex(); now != latest {
		t.Fatalf("refused registrations wrote to raft: latest index %d -> %d", latest, now)
	}
	if j, _ := s.State().JobByID(nil, structs.DefaultNamespace, "api"); j != nil {
		t.Fatal("a refused job was stored")
	}
	if j, _ := s.State().JobByID(nil, structs.DefaultNamespace, "web"); j == nil || j.JobModifyIndex != first.JobModifyIndex {
		t.Fatalf("a refused update changed the job: %+v", j)
	}

	mustSetSchedulerConfig(t, s, structs.SchedulerConfiguration{})
	registerJob(t, s, itJob("api", 1))
}
