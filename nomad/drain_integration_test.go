package nomad

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/drainer"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// These tests drive the drainer inside real servers (raft, FSM, broker,
// the real schedulers and plan applier) on a fake clock. The test plays
// the clients: it reports replacements running, old allocs stopped, and
// decides when a replacement's health is settled.

// startDrainServer is a fake-clock server whose nodes never miss a
// heartbeat while the test moves time to a drain deadline.
func startDrainServer(t *testing.T) (*Server, *clock.Fake) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	s := testServer(t, func(c *Config) { drainTestConfig(c, clock) })
	WaitForLeader(t, 5*time.Second, s)
	return s, clock
}

func drainTestConfig(c *Config, clock *clock.Fake) {
	c.Clock = clock
	c.NumSchedulers = 2
	c.EvalNackTimeout = fakeClockNackTimeout
	c.MinHeartbeatTTL = 100 * time.Hour
	c.HeartbeatGrace = 100 * time.Hour
	c.FailoverHeartbeatTTL = 100 * time.Hour
	// The fake clock stands still between the test's steps: a bound on
	// the pass rate measured on it would hold every pass back.
	c.DrainerMinPassInterval = 0
}

// drainJob is a service job whose group migrates maxParallel at a time.
func drainJob(id string, count, maxParallel int) *structs.Job {
	j := itJob(id, count)
	j.TaskGroups[0].Migrate = &structs.MigrateStrategy{MaxParallel: maxParallel, HealthCheck: structs.UpdateHealthCheckTaskStates,
		MinHealthyTime: time.Second, HealthyDeadline: time.Minute}
	return j
}

func startDrain(t *testing.T, s *Server, nodeID string, spec structs.DrainSpec, markEligible bool) {
	t.Helper()
	var resp structs.NodeDrainUpdateResponse
	req := &structs.NodeUpdateDrainRequest{NodeID: nodeID, DrainStrategy: &structs.DrainStrategy{DrainSpec: spec}, MarkEligible: markEligible}
	writeThroughElections(t, s, "Node.UpdateDrain", req, &resp)
}

// placeAll registers job and waits until all its allocs are placed, then
// reports each running with its health decided.
func placeAll(t *testing.T, s *Server, job *structs.Job) []*structs.Allocation {
	t.Helper()
	var resp structs.JobRegisterResponse
	writeThroughElections(t, s, "Job.Register", &structs.JobRegisterRequest{Job: job}, &resp)
	want := job.TaskGroups[0].Count
	var live []*structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live = desiredRunning(jobAllocs(t, s, job.ID))
		return len(live) == want, fmt.Sprintf("%d of %d placed", len(live), want)
	})
	for _, a := range live {
		if job.Type == structs.JobTypeService {
			throughElections(t, s, func() error { return reportHealth(s, a, true) })
		} else {
			mustReport(t, s, a, structs.AllocClientStatusRunning)
		}
	}
	return live
}

// playClients does what the clients would for every alloc of the jobs:
// an alloc the servers stopped is reported complete, a new one running
// (health not yet decided). It returns the allocs it reported running.
func playClients(t *testing.T, s *Server, jobIDs ...string) []*structs.Allocation {
	t.Helper()
	var started []*structs.Allocation
	for _, id := range jobIDs {
		for _, a := range jobAllocs(t, s, id) {
			switch {
			case a.ClientTerminalStatus():
			case a.DesiredStatus != structs.AllocDesiredStatusRun:
				mustReport(t, s, a, structs.AllocClientStatusComplete)
			case a.ClientStatus == structs.AllocClientStatusPending:
				mustReport(t, s, a, structs.AllocClientStatusRunning)
				started = append(started, a)
			}
		}
	}
	return started
}

func mustReport(t *testing.T, s *Server, a *structs.Allocation, status string) {
	t.Helper()
	throughElections(t, s, func() error { return reportAlloc(s, a, status) })
}

// throughElections runs a client's write again while it fails because
// leadership moved (see writeThroughElections); a report may be repeated.
func throughElections(t *testing.T, s *Server, write func() error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := write()
		if err == nil {
			return
		}
		msg := err.Error()
		moved := strings.Contains(msg, structs.ErrNoLeader.Error()) || strings.Contains(msg, structs.ErrNotLeader.Error())
		if !moved || time.Now().After(deadline) {
			t.Fatalf("client write: %v", err)
		}
		WaitFor(t, 10*time.Second, func() (bool, string) {
			addr, _ := s.Leader()
			return addr != "", s.config.NodeName + " knows no leader"
		})
	}
}

// unsettled counts the group's allocs that are on their way: marked on the
// draining node but not yet stopped, or placed elsewhere with no health.
func unsettled(allocs []*structs.Allocation, drained string) int {
	n := 0
	for _, a := range allocs {
		if a.TerminalStatus() {
			continue
		}
		if a.NodeID == drained && a.DesiredTransition.ShouldMigrate() {
			n++
		}
		if a.NodeID != drained && (a.DeploymentStatus == nil || a.DeploymentStatus.Healthy == nil) {
			n++
		}
	}
	return n
}

func drainDone(s *Server, nodeID string) (bool, string) {
	n, err := s.State().NodeByID(nil, nodeID)
	if err != nil || n == nil {
		return false, fmt.Sprintf("node %s: %v", nodeID, err)
	}
	if n.DrainStrategy != nil {
		return false, "node " + nodeID + " still draining"
	}
	return true, ""
}

func nodeEventMessages(t *testing.T, s *Server, nodeID string) []string {
	t.Helper()
	n, err := s.State().NodeByID(nil, nodeID)
	if err != nil || n == nil {
		t.Fatalf("node %s: %v", nodeID, err)
	}
	var out []string
	for _, e := range n.Events {
		out = append(out, e.Message)
	}
	return out
}

func countPrefixed(msgs []string, prefix string) int {
	n := 0
	for _, m := range msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// A group of 6 with max_parallel = 2 drained from the node it all runs on:
// at no time are more than 2 of its allocs on their way (marked and not
// yet replaced, or replaced and not yet healthy), and all 6 end elsewhere.
// Health comes one replacement at a time, so the drainer must also use a
// budget of 1.
func TestDrainPacesAGroupByItsMigrateBlock(t *testing.T) {
	s, _ := startDrainServer(t)
	registerNode(t, s, itNode("n1"))
	orig := placeAll(t, s, drainJob("web", 6, 2))
	registerNode(t, s, itNode("n2"))
	registerNode(t, s, itNode("n3"))

	startDrain(t, s, "n1", structs.DrainSpec{Deadline: time.Hour}, false)
	n1, _ := s.State().NodeByID(nil, "n1")
	if n1.SchedulingEligibility != structs.NodeSchedulingIneligible {
		t.Fatalf("a draining node must be ineligible at once, got %s", n1.SchedulingEligibility)
	}

	maxSeen := driveDrain(t, func() *Server { return s }, "web", "n1", nil)
	if maxSeen != 2 {
		t.Fatalf("the drain never used its budget of 2 (max %d in flight)", maxSeen)
	}
	live := desiredRunning(jobAllocs(t, s, "web"))
	if len(live) != 6 {
		t.Fatalf("want 6 live allocs after the drain, got %d", len(live))
	}
	for _, a := range live {
		if a.NodeID == "n1" {
			t.Fatalf("alloc %s still on the drained node", a.ID)
		}
	}
	for _, o := range orig {
		a, _ := s.State().AllocByID(nil, o.ID)
		if a.DesiredStatus != structs.AllocDesiredStatusStop || !a.DesiredTransition.ShouldMigrate() {
			t.Fatalf("original %s: desired %s, migrate %v", o.ID, a.DesiredStatus, a.DesiredTransition.ShouldMigrate())
		}
	}
	n1, _ = s.State().NodeByID(nil, "n1")
	if n1.SchedulingEligibility != structs.NodeSchedulingIneligible || n1.LastDrain == nil || n1.LastDrain.Status != state.DrainStatusComplete {
		t.Fatalf("a completed drain leaves the node ineligible with LastDrain complete: %s %+v", n1.SchedulingEligibility, n1.LastDrain)
	}
	msgs := nodeEventMessages(t, s, "n1")
	if countPrefixed(msgs, drainer.EventMigrating) < 3 || countPrefixed(msgs, drainer.EventComplete) != 1 {
		t.Fatalf("want an event per batch (at least 3) and one for completion, got %q", msgs)
	}
}

// driveDrain plays the clients of job while the drain of nodeID goes on,
// one replacement turning healthy at a time, until the drain completes
// (or stop says to pause). It fails the test if more than 2 of the group
// are ever on their way at once and returns the most it saw. cur is the
// server to talk to (the leader, which may change).
func driveDrain(t *testing.T, cur func() *Server, jobID, nodeID string, stop func() bool) int {
	t.Helper()
	maxSeen := 0
	check := func(s *Server) {
		t.Helper()
		if u := unsettled(jobAllocs(t, s, jobID), nodeID); u > maxSeen {
			maxSeen = u
			if u > 2 {
				t.Fatalf("%d allocs of the group migrating at once, max_parallel is 2", u)
			}
		}
	}
	var waiting []*structs.Allocation // reported running, health not yet decided
	for step := 0; step < 40; step++ {
		s := cur()
		if done, _ := drainDone(s, nodeID); done || (stop != nil && stop()) {
			break
		}
		// Let the drainer and scheduler act, checking at every look.
		WaitFor(t, 10*time.Second, func() (bool, string) {
			check(s)
			waiting = append(waiting, playClients(t, s, jobID)...)
			done, _ := drainDone(s, nodeID)
			ok, why := allEvalsDone(s, jobID)
			return done || (ok && len(waiting) > 0), "waiting for a replacement to start: " + why
		})
		check(s)
		if len(waiting) > 0 {
			// One replacement becomes healthy: room for one more.
			a := waiting[0]
			throughElections(t, s, func() error { return reportHealth(s, a, true) })
			waiting = waiting[1:]
		}
	}
	if stop == nil {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			playClients(t, cur(), jobID)
			return drainDone(cur(), nodeID)
		})
	}
	return maxSeen
}

// A leader change in the middle of a drain: the new leader's drainer
// picks the drain up from state and finishes it, still at the group's
// pace.
func TestDrainResumesAfterALeaderChange(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	var servers []*Server
	for i := 0; i < 3; i++ {
		i := i
		servers = append(servers, testServer(t, func(c *Config) {
			drainTestConfig(c, clock)
			c.BootstrapExpect = 3
			c.NodeName = fmt.Sprintf("%s-s%d", t.Name(), i)
		}))
	}
	for _, s := range servers {
		for _, o := range servers {
			if o != s {
				s.Join(o.RPCAddr())
			}
		}
	}
	live := servers
	cur := func() *Server { return WaitForLeader(t, 10*time.Second, live...) }
	s := cur()
	register := func(n *structs.Node) {
		var resp structs.NodeUpdateResponse
		writeThroughElections(t, s, "Node.Register", &structs.NodeRegisterRequest{Node: n}, &resp)
	}
	register(itNode("n1"))
	orig := placeAll(t, s, drainJob("web", 6, 2))
	register(itNode("n2"))
	register(itNode("n3"))
	startDrain(t, s, "n1", structs.DrainSpec{Deadline: time.Hour}, false)

	// Drive the drain until the first two originals are gone.
	firstBatchDone := func() bool {
		gone := 0
		for _, o := range orig {
			if a, _ := cur().State().AllocByID(nil, o.ID); a != nil && a.ClientTerminalStatus() {
				gone++
			}
		}
		return gone >= 2
	}
	maxSeen := driveDrain(t, cur, "web", "n1", firstBatchDone)
	if done, _ := drainDone(cur(), "n1"); done {
		t.Fatal("the drain finished before the leader change")
	}

	old := cur()
	if err := old.Shutdown(); err != nil {
		t.Fatal(err)
	}
	live = nil
	for _, o := range servers {
		if o != old {
			live = append(live, o)
		}
	}
	if m := driveDrain(t, cur, "web", "n1", nil); m > maxSeen {
		maxSeen = m
	}
	if maxSeen != 2 {
		t.Fatalf("want the budget of 2 used, max in flight %d", maxSeen)
	}
	for _, a := range desiredRunning(jobAllocs(t, cur(), "web")) {
		if a.NodeID == "n1" {
			t.Fatalf("alloc %s still on the drained node", a.ID)
		}
	}
	if n := len(desiredRunning(jobAllocs(t, cur(), "web"))); n != 6 {
		t.Fatalf("want 6 live allocs, got %d", n)
	}
}

// The operator may ask for the node back once drained.
func TestDrainCompletesAnEmptyNodeAndMarksItEligibleWhenAsked(t *testing.T) {
	s, _ := startDrainServer(t)
	registerNode(t, s, itNode("n1"))
	startDrain(t, s, "n1", structs.DrainSpec{Deadline: time.Hour}, true)
	WaitFor(t, 10*time.Second, func() (bool, string) { return drainDone(s, "n1") })
	n, _ := s.State().NodeByID(nil, "n1")
	if n.SchedulingEligibility != structs.NodeSchedulingEligible {
		t.Fatalf("-keep-ineligible=false must make the node eligible once drained, got %s", n.SchedulingEligibility)
	}
	msgs := nodeEventMessages(t, s, "n1")
	if msgs[len(msgs)-1] != drainer.EventComplete || countPrefixed(msgs, "Node drain strategy set") != 1 {
		t.Fatalf("want the start and the completion recorded, got %q", msgs)
	}
}

// Work with nowhere to go leaves a blocked eval and keeps running: a drain
// never stops work early. At the deadline it is stopped.
func TestDrainLeavesWorkThatCannotMoveRunningUntilTheDeadline(t *testing.T) {
	s, clock := startDrainServer(t)
	registerNode(t, s, itNode("n1"))
	orig := placeAll(t, s, drainJob("web", 2, 1))
	startDrain(t, s, "n1", structs.DrainSpec{Deadline: 10 * time.Minute}, false)

	var marked *structs.Allocation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		for _, o := range orig {
			a, _ := s.State().AllocByID(nil, o.ID)
			if a.DesiredTransition.ShouldMigrate() {
				marked = a
			}
		}
		blocked := false
		evals, _ := s.State().EvalsByJob(nil, structs.DefaultNamespace, "web")
		for _, e := range evals {
			blocked = blocked || e.Status == structs.EvalStatusBlocked
		}
		return marked != nil && blocked, "no alloc marked with a blocked eval"
	})
	clock.Advance(9 * time.Minute)
	WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "web") })
	for _, o := range orig {
		a, _ := s.State().AllocByID(nil, o.ID)
		if a.DesiredStatus != structs.AllocDesiredStatusRun {
			t.Fatalf("alloc %s stopped before the deadline with nowhere to go", a.ID)
		}
	}
	marks := 0
	for _, o := range orig {
		a, _ := s.State().AllocByID(nil, o.ID)
		if a.DesiredTransition.ShouldMigrate() {
			marks++
		}
	}
	if marks != 1 {
		t.Fatalf("max_parallel 1: a blocked migration must hold the rest back, %d marked", marks)
	}

	clock.Advance(2 * time.Minute)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		for _, o := range orig {
			a, _ := s.State().AllocByID(nil, o.ID)
			if a.DesiredStatus == structs.AllocDesiredStatusRun {
				return false, "alloc " + a.ID + " still wanted running past the deadline"
			}
		}
		return true, ""
	})
	WaitFor(t, 10*time.Second, func() (bool, string) {
		playClients(t, s, "web")
		return drainDone(s, "n1")
	})
	if msgs := nodeEventMessages(t, s, "n1"); countPrefixed(msgs, drainer.EventDeadline) != 1 {
		t.Fatalf("the deadline must be recorded once, got %q", msgs)
	}
}

// Batch work runs until it finishes or the deadline; at the deadline it
// is stopped (and placed again elsewhere).
func TestDrainStopsBatchWorkOnlyAtTheDeadline(t *testing.T) {
	s, clock := startDrainServer(t)
	registerNode(t, s, itNode("n1"))
	batch := placeAll(t, s, itJobOfType("etl", structs.JobTypeBatch))[0]
	svc := placeAll(t, s, drainJob("web", 1, 1))[0]
	registerNode(t, s, itNode("n2"))
	startDrain(t, s, "n1", structs.DrainSpec{Deadline: 10 * time.Minute}, false)

	// The service alloc moves; the batch one is left alone.
	WaitFor(t, 10*time.Second, func() (bool, string) {
		playClients(t, s, "web")
		a, _ := s.State().AllocByID(nil, svc.ID)
		return a.ClientStatus == structs.AllocClientStatusComplete, "service alloc not moved yet"
	})
	clock.Advance(5 * time.Minute)
	WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "etl") })
	if a, _ := s.State().AllocByID(nil, batch.ID); a.DesiredStatus != structs.AllocDesiredStatusRun || a.DesiredTransition.ShouldMigrate() {
		t.Fatalf("a batch alloc must run until the deadline: desired %s, migrate %v", a.DesiredStatus, a.DesiredTransition.ShouldMigrate())
	}
	if done, _ := drainDone(s, "n1"); done {
		t.Fatal("the drain completed while batch work still ran")
	}

	clock.Advance(6 * time.Minute)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, batch.ID)
		return a.DesiredStatus == structs.AllocDesiredStatusStop, "batch alloc not stopped at the deadline"
	})
	WaitFor(t, 10*time.Second, func() (bool, string) { return drainDone(s, "n1") })
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "etl"))
		return len(live) == 1 && live[0].NodeID == "n2", fmt.Sprintf("%d live batch allocs", len(live))
	})
}

// System allocs stop last, once everything else has left the node, and
// are not replaced; with -ignore-system they stay.
func TestDrainStopsSystemAllocsLast(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignore-system=%v", ignore), func(t *testing.T) {
			s, _ := startDrainServer(t)
			registerNode(t, s, itNode("n1"))
			sys := placeAll(t, s, itJobOfType("agent", structs.JobTypeSystem))[0]
			svc := placeAll(t, s, drainJob("web", 1, 1))[0]
			registerNode(t, s, itNode("n2"))
			WaitFor(t, 10*time.Second, func() (bool, string) {
				playClients(t, s, "agent")
				return len(desiredRunning(jobAllocs(t, s, "agent"))) == 2, "system job not on n2 yet"
			})
			startDrain(t, s, "n1", structs.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: ignore}, false)

			// The service alloc is stopped by the scheduler but its client
			// has not said so: the system alloc must stay.
			WaitFor(t, 10*time.Second, func() (bool, string) {
				a, _ := s.State().AllocByID(nil, svc.ID)
				return a.DesiredStatus == structs.AllocDesiredStatusStop, "service alloc not stopped"
			})
			WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "web") })
			if a, _ := s.State().AllocByID(nil, sys.ID); a.DesiredStatus != structs.AllocDesiredStatusRun || a.DesiredTransition.ShouldMigrate() {
				t.Fatalf("the system alloc went before the service alloc had left: desired %s", a.DesiredStatus)
			}

			playClients(t, s, "web") // the service alloc has left
			if ignore {
				WaitFor(t, 10*time.Second, func() (bool, string) { return drainDone(s, "n1") })
				WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "agent") })
				if a, _ := s.State().AllocByID(nil, sys.ID); a.DesiredStatus != structs.AllocDesiredStatusRun || a.DesiredTransition.ShouldMigrate() {
					t.Fatalf("-ignore-system must leave the system alloc running, desired %s", a.DesiredStatus)
				}
				return
			}
			WaitFor(t, 10*time.Second, func() (bool, string) {
				a, _ := s.State().AllocByID(nil, sys.ID)
				return a.DesiredStatus == structs.AllocDesiredStatusStop, "system alloc not stopped after the rest left"
			})
			if done, _ := drainDone(s, "n1"); done {
				t.Fatal("the drain completed before the system alloc's client stopped it")
			}
			playClients(t, s, "agent")
			WaitFor(t, 10*time.Second, func() (bool, string) { return drainDone(s, "n1") })
			WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, "agent") })
			for _, a := range desiredRunning(jobAllocs(t, s, "agent")) {
				if a.NodeID == "n1" {
					t.Fatalf("a system alloc was placed again on the drained node: %s", a.ID)
				}
			}
			if msgs := nodeEventMessages(t, s, "n1"); countPrefixed(msgs, drainer.EventStoppingSystem) != 1 {
				t.Fatalf("want the system stop recorded, got %q", msgs)
			}
		})
	}
}

// -force is a zero deadline: everything is stopped at once.
func TestDrainForceStopsEverythingAtOnce(t *testing.T) {
	s, _ := startDrainServer(t)
	registerNode(t, s, itNode("n1"))
	orig := placeAll(t, s, drainJob("web", 3, 1))
	registerNode(t, s, itNode("n2"))
	startDrain(t, s, "n1", structs.DrainSpec{Deadline: -1}, false)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		for _, o := range orig {
			a, _ := s.State().AllocByID(nil, o.ID)
			if a.DesiredStatus != structs.AllocDesiredStatusStop {
				return false, "alloc " + a.ID + " not stopped"
			}
		}
		return true, ""
	})
	WaitFor(t, 10*time.Second, func() (bool, string) { return drainDone(s, "n1") })
}
