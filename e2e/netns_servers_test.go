//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// quickAPI is a client for s whose requests give up after timeout, for
// calls made while the cluster may have no leader.
func quickAPI(t *testing.T, s *agent, timeout time.Duration) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: s.httpAddr(), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nodeOf returns the namespace of the agent.
func (c *netnsCluster) nodeOf(a *agent) *netnsNode { return c.nodes[a.name] }

// A client that reaches the followers but not the leader keeps working
// through a follower: its calls to the leader fail (a prohibit route both
// ways) and it moves on to another server, which forwards to the leader.
// If its heartbeats lapsed meanwhile, it reconnects: either way exactly
// the original alloc runs (keep_original), and a job registered during
// the split is placed on it, started and reported through the follower.
func TestNetnsClientReachesFollowerNotLeader(t *testing.T) {
	elapsed(t)
	m := newTaskMarker(t)
	c := startNetnsCluster(t, netnsClusterSpec{servers: 3, clients: []string{"c1", "c2"}})
	leader, followers := c.leader(t, c.servers, "")
	f := followers[0]
	registerJob(t, f, serviceJob("steady", m, keepOriginalFor5m), 10*time.Second)
	orig, origPid := waitForFirstAlloc(t, f, "steady", m)
	x := c.nodes[orig.NodeName]
	// A connection to the leader that was open at the split then fails in
	// seconds, not at yamux's next keepalive (up to 40s).
	x.fastTCPGiveUp()

	splitAt := time.Now()
	block(t, x, c.nodeOf(leader))
	steady := func() (bool, string) {
		if st := nodeStatus(f, x.name); st != "ready" {
			return false, x.name + " is " + st
		}
		allocs, err := jobAllocs(f, "steady")
		if err != nil {
			return false, err.Error()
		}
		r := runningAllocs(allocs)
		if len(r) != 1 || r[0].ID != orig.ID {
			return false, "steady: " + describeAllocs(allocs)
		}
		procs := m.procs()
		if procs[orig.ID] != origPid || (len(procs) != 1 && len(procs) != 2) {
			return false, fmt.Sprintf("processes %v, want the original's (pid %d)", procs, origPid)
		}
		return true, ""
	}
	waitForStable(t, 60*time.Second, 5*time.Second, steady)
	t.Logf("%s cut from the leader: steady through a follower %s after the split", x.name, time.Since(splitAt).Round(time.Millisecond))
	if l, _ := leader.api().Status().Leader(); l != leader.rpcAddr() {
		t.Fatalf("the leader changed (%s): only a client was split from it", l)
	}

	// New work for the split client, registered through a follower.
	registerJob(t, followers[1], pinnedServiceJob("during", m, "", x.name), 10*time.Second)
	during, _ := waitForFirstAlloc(t, followers[1], "during", m)
	t.Logf("a job placed on %s during the split runs %s after the split", x.name, time.Since(splitAt).Round(time.Millisecond))

	unblock(t, x, c.nodeOf(leader))
	waitForStable(t, 30*time.Second, 3*time.Second, func() (bool, string) {
		if ok, why := steady(); !ok {
			return false, why
		}
		allocs, err := jobAllocs(f, "during")
		if err != nil {
			return false, err.Error()
		}
		r := runningAllocs(allocs)
		return len(r) == 1 && r[0].ID == during.ID && m.procs()[during.ID] != 0, "during: " + describeAllocs(allocs)
	})
	waitForEvalsDone(t, f, "steady")
	if a, _, err := f.api().Allocations().Info(orig.ID, nil); err == nil && len(a.AllocStates) > 0 {
		// The heartbeats lapsed during the failover: the record must say
		// so, and the reconnect.
		assertUnknownThenRunning(t, a)
		t.Logf("%s was disconnected while it moved to a follower, and reconnected", x.name)
	}
}

// The leader cut from both other servers (clients still reach all three)
// must step down; the other two elect a new leader. Jobs are registered
// throughout the cut through whichever server answers; every one that was
// acknowledged exists on every server after the heal, and runs exactly
// once. A job running from before the cut is never placed twice.
func TestNetnsLeaderCutFromPeers(t *testing.T) {
	elapsed(t)
	m := newTaskMarker(t)
	c := startNetnsCluster(t, netnsClusterSpec{servers: 3, clients: []string{"c1", "c2"}})
	leader, followers := c.leader(t, c.servers, "")
	registerJob(t, followers[0], serviceJob("before", m, keepOriginalFor5m), 10*time.Second)
	before, beforePid := waitForFirstAlloc(t, followers[0], "before", m)

	// Never more than one "before" alloc running, at any check.
	// Never more than one "before" alloc running, at any check, on any
	// server that answers (a stale read: each server's own state, and no
	// waiting on a leader that may be gone).
	checks := 0
	noDouble := func() {
		t.Helper()
		for _, s := range c.servers {
			stubs, _, err := quickAPI(t, s, 2*time.Second).Jobs().Allocations("before", true, &api.QueryOptions{AllowStale: true})
			if err != nil {
				continue // this server cannot answer now
			}
			checks++
			running := 0
			for _, a := range stubs {
				if a.DesiredStatus == "run" && a.ClientStatus == "running" {
					running++
				}
			}
			if running > 1 {
				t.Fatalf("job before placed twice, as %s sees it: %d allocs running", s.name, running)
			}
		}
		if p := m.procs(); len(p) > 1 {
			t.Fatalf("job before runs %d processes: %v", len(p), p)
		}
	}

	cutAt := time.Now()
	ln := c.nodeOf(leader)
	for _, f := range followers {
		block(t, ln, c.nodeOf(f))
	}
	// One writer per server, each registering through its own server
	// until told to stop: a call to the cut-off leader may hang until its
	// timeout, and must not hold up the others.
	var (
		mu             sync.Mutex
		acked          []string
		tried          int
		ackedAfterElec int
		newLeader      string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := quickAPI(t, s, 5*time.Second)
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("ack-%s-%02d", s.name, n)
				job, err := q.Jobs().ParseHCL(mockJob(id, 1), true)
				if err != nil {
					// Parsing is local to the server: a failure means it
					// cannot answer at all right now.
					select {
					case <-stop:
						return
					case <-time.After(200 * time.Millisecond):
					}
					continue
				}
				_, _, err = q.Jobs().Register(job, nil)
				mu.Lock()
				tried++
				if err == nil {
					acked = append(acked, id)
					if newLeader != "" {
						ackedAfterElec++
					}
				}
				mu.Unlock()
				// A steady trickle, not a flood: the point is writes
				// arriving throughout the cut, not load.
				select {
				case <-stop:
					return
				case <-time.After(time.Second):
				}
			}
		}()
	}
	steppedDown := false
	var downAfter time.Duration
	waitFor(t, 60*time.Second, func() (bool, string) {
		noDouble()
		if !steppedDown {
			l, err := quickAPI(t, leader, 2*time.Second).Status().Leader()
			if steppedDown = err != nil || l != leader.rpcAddr(); steppedDown {
				downAfter = time.Since(cutAt)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if newLeader == "" {
			l1, e1 := quickAPI(t, followers[0], 2*time.Second).Status().Leader()
			l2, e2 := quickAPI(t, followers[1], 2*time.Second).Status().Leader()
			if e1 == nil && e2 == nil && l1 == l2 && l1 != "" && l1 != leader.rpcAddr() {
				newLeader = l1
				t.Logf("new leader %s agreed %s after the cut", newLeader, time.Since(cutAt).Round(time.Millisecond))
			}
		}
		return steppedDown && newLeader != "" && ackedAfterElec >= 4,
			fmt.Sprintf("old leader stepped down: %v; new leader %q; %d registrations acknowledged of %d tried", steppedDown, newLeader, len(acked), tried)
	})
	close(stop)
	wg.Wait()
	t.Logf("the cut leader stepped down within %s; during the cut: %d registrations tried, %d acknowledged, %d no-double-placement checks",
		downAfter.Round(time.Millisecond), tried, len(acked), checks)

	healAt := time.Now()
	for _, f := range followers {
		unblock(t, ln, c.nodeOf(f))
	}
	agreed := waitForAgreedLeader(t, c.servers, 30*time.Second, "")
	t.Logf("all three agree on leader %s %s after the heal", agreed, time.Since(healAt).Round(time.Millisecond))

	// Every acknowledged job is on every server and runs exactly once.
	sort.Strings(acked)
	for _, s := range c.servers {
		waitFor(t, 30*time.Second, func() (bool, string) {
			jobs, _, err := s.api().Jobs().List(&api.QueryOptions{AllowStale: true})
			if err != nil {
				return false, err.Error()
			}
			have := map[string]bool{}
			for _, j := range jobs {
				have[j.ID] = true
			}
			var missing []string
			for _, id := range acked {
				if !have[id] {
					missing = append(missing, id)
				}
			}
			return len(missing) == 0, fmt.Sprintf("%s lacks acknowledged jobs %v", s.name, missing)
		})
	}
	s := followers[0]
	for _, id := range acked {
		waitFor(t, 30*time.Second, func() (bool, string) {
			allocs, err := jobAllocs(s, id)
			if err != nil {
				return false, err.Error()
			}
			return len(runningAllocs(allocs)) == 1, id + ": " + describeAllocs(allocs)
		})
		waitForEvalsDone(t, s, id)
		allocs, _ := jobAllocs(s, id)
		live := 0
		for _, a := range allocs {
			if a.DesiredStatus == "run" && !a.ClientTerminalStatus() {
				live++
			}
		}
		if live != 1 {
			t.Fatalf("%s: want exactly one live alloc after every eval: %s", id, describeAllocs(allocs))
		}
	}
	waitForEvalsDone(t, s, "before")
	allocs, _ := jobAllocs(s, "before")
	if r := runningAllocs(allocs); len(r) != 1 || r[0].ID != before.ID {
		t.Fatalf("before: want the original alone running: %s", describeAllocs(allocs))
	}
	if p := m.procs(); len(p) != 1 || p[before.ID] != beforePid {
		t.Fatalf("before: want the original's process (pid %d) alone: %v", beforePid, p)
	}
	t.Logf("acknowledged jobs all present and placed once: %s", strings.Join(acked, " "))
}
