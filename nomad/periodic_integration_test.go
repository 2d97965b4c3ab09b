package nomad

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
)

// These tests drive the dispatcher inside real servers: jobs arrive through
// Job.Register, reach the dispatcher through the FSM hook, and children
// go through raft, the broker, a worker and the plan applier.

// periodicServerConfig shares one fake clock and makes node heartbeats
// last longer than any test advances it, so jumping to the next launch
// does not mark the node down.
func periodicServerConfig(clock *clock.Fake) func(*Config) {
	return func(c *Config) {
		c.Clock = clock
		c.MinHeartbeatTTL = 48 * time.Hour
		c.HeartbeatGrace = 48 * time.Hour
		c.FailoverHeartbeatTTL = 48 * time.Hour
		c.EvalNackTimeout = fakeClockNackTimeout
	}
}

// periodicServerOptions give the dispatcher a timerWatch, so armedAt sees
// what its loop waits for.
var periodicServerOptions = serverOptions{wrapPeriodicClock: watchTimers}

func livePeriodicAlloc(t *testing.T, s *Server, jobID string) *structs.Allocation {
	t.Helper()
	var live *structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		allocs := desiredRunning(jobAllocs(t, s, jobID))
		if len(allocs) != 1 {
			return false, fmt.Sprintf("%d live allocs of %s", len(allocs), jobID)
		}
		live = allocs[0]
		return true, ""
	})
	return live
}

func waitChildStatus(t *testing.T, s *Server, childID, want string) {
	t.Helper()
	WaitFor(t, 10*time.Second, func() (bool, string) {
		j, _ := s.State().JobByID(nil, structs.DefaultNamespace, childID)
		if j == nil {
			return false, childID + " not in state"
		}
		return j.Status == want, fmt.Sprintf("%s is %s, want %s", childID, j.Status, want)
	})
}

func TestPeriodicJobLaunchesAChildThatIsPlaced(t *testing.T) {
	clock := clock.NewFake(periodicEpoch)
	s := testServerWith(t, periodicServerConfig(clock), periodicServerOptions)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	if resp := registerJob(t, s, periodicJob("report", "*/15 * * * *")); resp.EvalID != "" {
		t.Fatalf("registering a periodic parent created eval %s", resp.EvalID)
	}

	tick := periodicEpoch.Add(8 * time.Minute)
	waitArmed(t, s.periodicDispatcher, tick)
	clock.Advance(8 * time.Minute)
	waitArmed(t, s.periodicDispatcher, tick.Add(15*time.Minute))

	children := childrenOf(t, s.State(), "report")
	if len(children) != 1 {
		t.Fatalf("%d children after one tick", len(children))
	}
	child := children[0]
	if child.ID != fmt.Sprintf("report/periodic-%d", tick.Unix()) || child.ParentID != "report" || child.IsPeriodic() {
		t.Fatalf("child %q with ParentID %q, periodic %v", child.ID, child.ParentID, child.IsPeriodic())
	}
	alloc := livePeriodicAlloc(t, s, child.ID)
	if alloc.NodeID != "n1" {
		t.Fatalf("child placed on %q", alloc.NodeID)
	}
	evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, child.ID)
	if err != nil || len(evals) != 1 || evals[0].TriggeredBy != structs.EvalTriggerPeriodicJob {
		t.Fatalf("child evals %v (%v), want one periodic-job eval", evals, err)
	}
	WaitFor(t, 5*time.Second, func() (bool, string) {
		sum, _ := s.State().JobSummaryByID(nil, structs.DefaultNamespace, "report")
		if sum == nil || sum.Children == nil {
			return false, "no children summary"
		}
		return sum.Children.Running == 1, fmt.Sprintf("children %+v", *sum.Children)
	})
}

func TestPeriodicProhibitOverlapSkipsALaunchWhileTheChildRuns(t *testing.T) {
	clock := clock.NewFake(periodicEpoch)
	s := testServerWith(t, periodicServerConfig(clock), periodicServerOptions)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	job := periodicJob("report", "*/15 * * * *")
	job.Periodic.ProhibitOverlap = true
	registerJob(t, s, job)

	first := periodicEpoch.Add(8 * time.Minute)
	waitArmed(t, s.periodicDispatcher, first)
	clock.Advance(8 * time.Minute)
	firstChild := fmt.Sprintf("report/periodic-%d", first.Unix())
	alloc := livePeriodicAlloc(t, s, firstChild)
	if err := reportAlloc(s, alloc, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}
	waitChildStatus(t, s, firstChild, structs.JobStatusRunning)

	second := first.Add(15 * time.Minute)
	waitArmed(t, s.periodicDispatcher, second)
	clock.Advance(15 * time.Minute)
	waitArmed(t, s.periodicDispatcher, second.Add(15*time.Minute))
	if n := len(childrenOf(t, s.State(), "report")); n != 1 {
		t.Fatalf("%d children: a launch overlapped a running child", n)
	}

	if err := reportAlloc(s, alloc, structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	waitChildStatus(t, s, firstChild, structs.JobStatusDead)
	clock.Advance(15 * time.Minute)
	waitArmed(t, s.periodicDispatcher, second.Add(30*time.Minute))
	children := childrenOf(t, s.State(), "report")
	if len(children) != 2 || children[1].ID != fmt.Sprintf("report/periodic-%d", second.Add(15*time.Minute).Unix()) {
		t.Fatalf("children %d, want the launch after the first child finished", len(children))
	}
}

func TestPeriodicStoppingTheParentStopsLaunchesAndAChangedSpecReschedules(t *testing.T) {
	clock := clock.NewFake(periodicEpoch)
	s := testServerWith(t, periodicServerConfig(clock), periodicServerOptions)
	WaitForLeader(t, 5*time.Second, s)
	registerJob(t, s, periodicJob("report", "*/15 * * * *"))
	waitArmed(t, s.periodicDispatcher, periodicEpoch.Add(8*time.Minute))

	var dereg structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "report"}, &dereg); err != nil {
		t.Fatal(err)
	}
	waitArmed(t, s.periodicDispatcher, time.Time{})
	clock.Advance(time.Hour)
	if _, ok := s.periodicDispatcher.Tracked("", "report"); ok {
		t.Fatal("a stopped parent is still tracked")
	}
	if n := len(childrenOf(t, s.State(), "report")); n != 0 {
		t.Fatalf("a stopped parent launched %d children", n)
	}

	// Run again with an hourly spec: the next launch is the next full hour.
	registerJob(t, s, periodicJob("report", "0 * * * *"))
	nextHour := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC)
	waitArmed(t, s.periodicDispatcher, nextHour)
	clock.Advance(nextHour.Sub(clock.Now()))
	waitArmed(t, s.periodicDispatcher, nextHour.Add(time.Hour))
	children := childrenOf(t, s.State(), "report")
	if len(children) != 1 || children[0].ID != fmt.Sprintf("report/periodic-%d", nextHour.Unix()) {
		t.Fatalf("%d children after re-registering, want one at 12:00", len(children))
	}
}

func TestPeriodicForceRPCLaunchesImmediately(t *testing.T) {
	clock := clock.NewFake(periodicEpoch)
	s := testServerWith(t, periodicServerConfig(clock), periodicServerOptions)
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	registerJob(t, s, periodicJob("report", "0 0 1 1 *"))
	registerJob(t, s, itJob("web", 1))

	var resp structs.PeriodicForceResponse
	if err := s.RPC("Job.PeriodicForce", &structs.PeriodicForceRequest{JobID: "report"}, &resp); err != nil {
		t.Fatal(err)
	}
	eval, err := s.State().EvalByID(nil, resp.EvalID)
	if err != nil || eval == nil || resp.EvalCreateIndex == 0 {
		t.Fatalf("forced eval %q at %d not in state (%v)", resp.EvalID, resp.EvalCreateIndex, err)
	}
	if want := fmt.Sprintf("report/periodic-%d", periodicEpoch.Unix()); eval.JobID != want || eval.TriggeredBy != structs.EvalTriggerPeriodicJob {
		t.Fatalf("forced eval for %q by %s, want %q", eval.JobID, eval.TriggeredBy, want)
	}
	livePeriodicAlloc(t, s, eval.JobID)

	for _, c := range []struct{ id, want string }{
		{"web", "is not periodic"},
		{"missing", "not found"},
	} {
		err := s.RPC("Job.PeriodicForce", &structs.PeriodicForceRequest{JobID: c.id}, &resp)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("forcing %s: want an error containing %q, got %v", c.id, c.want, err)
		}
	}
}

// Only the leader launches; after a leader change the new leader rebuilds
// its schedule from state and launches the next tick, once.
//
// Raft may also move leadership on its own while the test runs (see
// election_helpers_test.go); a leader that takes over catches up a launch
// that fell due meanwhile. So the test follows whichever server leads,
// and checks what must hold whoever leads: only a leader tracks the job,
// and each launch exists exactly once.
func TestPeriodicOnlyTheLeaderLaunchesAndANewLeaderTakesOver(t *testing.T) {
	t.Parallel()
	clock := clock.NewFake(periodicEpoch)
	var servers []*Server
	for i := 0; i < 3; i++ {
		cfg := periodicServerConfig(clock)
		servers = append(servers, testServerWith(t, func(c *Config) {
			cfg(c)
			c.BootstrapExpect = 3
			c.NodeName = fmt.Sprintf("s%d", i)
		}, periodicServerOptions))
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	writeThroughElections(t, WaitForLeader(t, 10*time.Second, servers...), "Job.Register",
		&structs.JobRegisterRequest{Job: periodicJob("report", "*/15 * * * *")}, &structs.JobRegisterResponse{})
	first := periodicEpoch.Add(8 * time.Minute)
	waitLeaderArmed(t, servers, first)
	waitOnlyLeaderTracks(t, servers, "report")

	clock.Advance(8 * time.Minute)
	waitLeaderArmed(t, servers, first.Add(15*time.Minute))
	firstChild := fmt.Sprintf("report/periodic-%d", first.Unix())
	waitChildren(t, servers, "report", firstChild)

	leader := WaitForLeader(t, 10*time.Second, servers...)
	leader.Shutdown()
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	second := first.Add(15 * time.Minute)
	// The first launch is in state, so the new leader does not repeat it.
	waitLeaderArmed(t, rest, second)
	clock.Advance(15 * time.Minute)
	waitLeaderArmed(t, rest, second.Add(15*time.Minute))
	waitChildren(t, rest, "report", firstChild, fmt.Sprintf("report/periodic-%d", second.Unix()))
}

// waitLeaderArmed waits until whichever of servers leads has its
// dispatcher armed for the launch at want (waitArmed, following
// leadership).
func waitLeaderArmed(t *testing.T, servers []*Server, want time.Time) *Server {
	t.Helper()
	return waitForLeaderWhere(t, 10*time.Second, servers, "armed for "+want.UTC().String(), func(s *Server) bool {
		return armedAt(t, s.periodicDispatcher).Equal(want)
	})
}

// waitOnlyLeaderTracks waits until the job is tracked by exactly one of
// servers, and that one leads. A server that just lost leadership may
// track it until it has stepped down; a follower's FSM hook never makes
// it track the job, or this never holds.
func waitOnlyLeaderTracks(t *testing.T, servers []*Server, jobID string) {
	t.Helper()
	WaitFor(t, 10*time.Second, func() (bool, string) {
		var tracking []string
		leads := false
		for _, s := range servers {
			if _, ok := s.periodicDispatcher.Tracked("", jobID); ok {
				tracking = append(tracking, s.config.NodeName)
				leads = s.IsLeader()
			}
		}
		return len(tracking) == 1 && leads, fmt.Sprintf("%s tracked by %v, want only the leader", jobID, tracking)
	})
}

// waitChildren waits until every one of servers has applied exactly the
// children want of the parent: a launch never happens twice, whoever led.
func waitChildren(t *testing.T, servers []*Server, parentID string, want ...string) {
	t.Helper()
	for _, s := range servers {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			var ids []string
			for _, c := range childrenOf(t, s.State(), parentID) {
				ids = append(ids, c.ID)
			}
			return slices.Equal(ids, want), fmt.Sprintf("%s has children %v, want %v", s.config.NodeName, ids, want)
		})
	}
}

func TestPeriodicPlanReportsTheNextLaunch(t *testing.T) {
	clock := clock.NewFake(periodicEpoch)
	s := testServerWith(t, periodicServerConfig(clock), periodicServerOptions)
	WaitForLeader(t, 5*time.Second, s)
	job := periodicJob("nightly", "0 3 * * *")
	job.Periodic.TimeZone = "America/New_York"
	var resp structs.JobPlanResponse
	if err := s.RPC("Job.Plan", &structs.JobPlanRequest{Job: job}, &resp); err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 16, 8, 0, 0, 0, time.UTC); !resp.NextPeriodicLaunch.Equal(want) {
		t.Fatalf("next launch %s, want %s", resp.NextPeriodicLaunch.UTC(), want)
	}
}
