package nomad

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/heartbeat"
	"github.com/drover-sched/drover/structs"
)

// stallClock models this server not running for d (see clock.Fake.Jump).
func stallClock(c *clock.Fake, d time.Duration) { c.Jump(d) }

// logBuffer collects a server's log lines for a test to read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines returns the lines that contain substr.
func (l *logBuffer) lines(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range strings.Split(l.b.String(), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

const stallLog = "this server stalled"

// Heartbeat settings of the stall tests: the threshold is the 5s grace,
// and a fresh window for a small fleet is 2*10s + 5s.
const (
	stallTestTTL   = 10 * time.Second
	stallTestGrace = 5 * time.Second
	stallTestFresh = 2*stallTestTTL + stallTestGrace
)

// startStallServer is startFakeClockServer with short heartbeat settings
// and its warnings collected.
func startStallServer(t *testing.T) (*Server, *clock.Fake, *logBuffer) {
	t.Helper()
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	logs := &logBuffer{}
	s := testServer(t, func(c *Config) {
		c.Clock = clock
		c.NumSchedulers = 2
		c.EvalNackTimeout = fakeClockNackTimeout
		c.MinHeartbeatTTL = stallTestTTL
		c.HeartbeatGrace = stallTestGrace
		c.Logger = hclog.New(&hclog.LoggerOptions{Name: t.Name(), Level: hclog.Warn, Output: logs})
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", strings.Join(logs.lines(""), "\n"))
		}
	})
	WaitForLeader(t, 5*time.Second, s)
	return s, clock, logs
}

// registerArmed registers nodes and waits until each has a timer, so the
// heartbeater's term had started when they registered.
func registerArmed(t *testing.T, s *Server, nodes ...*structs.Node) {
	t.Helper()
	WaitFor(t, 5*time.Second, func() (bool, string) {
		for _, n := range nodes {
			if !s.heartbeats.Armed(n.ID) {
				registerNode(t, s, n)
				return false, "no timer for " + n.ID
			}
		}
		return true, ""
	})
}

func lastEvent(t *testing.T, s *Server, id string) *structs.NodeEvent {
	t.Helper()
	n, err := s.State().NodeByID(nil, id)
	if err != nil || n == nil || len(n.Events) == 0 {
		t.Fatalf("node %s has no events (%v)", id, err)
	}
	return n.Events[len(n.Events)-1]
}

// When this server does not run for long past every node's deadline, its
// timers fire late all at once: the nodes get a fresh window instead of
// being marked down, and the stall is logged once. A node whose heartbeat
// then arrives stays ready; one that stays silent through the fresh
// window is marked down when it ends, not before.
func TestStallGivesNodesAFreshWindowInsteadOfMarkingThemDown(t *testing.T) {
	s, clock, logs := startStallServer(t)
	beating, silent := itNode("beating"), itNode("silent")
	registerArmed(t, s, beating, silent)

	stallClock(clock, 2*time.Minute)
	resumed := clock.Now()
	for _, n := range []*structs.Node{beating, silent} {
		if st := nodeStatus(s, n.ID); st != structs.NodeStatusReady {
			t.Fatalf("%s marked %s for this server's own stall", n.ID, st)
		}
		if !s.heartbeats.Armed(n.ID) {
			t.Fatalf("%s has no fresh window after the stall", n.ID)
		}
	}
	// The beating node's heartbeat was waiting in its socket.
	heartbeatNode(t, s, beating)

	advanceKeeping(t, s, clock, stallTestFresh-time.Second, beating)
	if eventually(300*time.Millisecond, func() bool { return nodeStatus(s, silent.ID) != structs.NodeStatusReady }) {
		t.Fatalf("silent node marked %s within its fresh window", nodeStatus(s, silent.ID))
	}
	advanceKeeping(t, s, clock, 2*time.Second, beating)
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := nodeStatus(s, silent.ID)
		return st == structs.NodeStatusDown, "silent node still " + st
	})
	ev := lastEvent(t, s, silent.ID)
	if ev.Message != "Node heartbeat missed" || ev.Timestamp.Before(resumed.Add(stallTestFresh)) {
		t.Fatalf("silent node's last event %q at %s, want a missed heartbeat no earlier than %s",
			ev.Message, ev.Timestamp.Sub(resumed), stallTestFresh)
	}
	if st := nodeStatus(s, beating.ID); st != structs.NodeStatusReady {
		t.Fatalf("the beating node is %s", st)
	}
	got := logs.lines(stallLog)
	if len(got) != 1 || !strings.Contains(got[0], "nodes_given_new_window=2") {
		t.Fatalf("want the stall logged once with both nodes given a window, got %q", got)
	}
}

// Without a stall a node that misses its deadline is marked down as
// before, however little it is past it. A stall shorter than the
// threshold (the grace absorbs it) is ordinary lateness.
func TestExpiryWithoutAStallMarksTheNodeDown(t *testing.T) {
	for _, tc := range []struct {
		name string
		lead time.Duration // how long before the deadline the clock stops
		pass func(*clock.Fake)
	}{
		{"time passes just beyond the deadline", time.Millisecond, func(c *clock.Fake) { c.Advance(2 * time.Millisecond) }},
		{"a stall shorter than the threshold spans the deadline", 3 * time.Second, func(c *clock.Fake) {
			stallClock(c, stallTestGrace-time.Second)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, clock, logs := startStallServer(t)
			n := itNode("n1")
			start := clock.Now()
			registerArmed(t, s, n)
			deadline, _ := s.heartbeats.Deadline(n.ID)
			if d := deadline.Sub(start); d < stallTestTTL+stallTestGrace || d >= 2*stallTestTTL+stallTestGrace {
				t.Fatalf("timer armed for %s, want TTL plus grace", d)
			}

			clock.Advance(deadline.Sub(start) - tc.lead)
			if eventually(300*time.Millisecond, func() bool { return nodeStatus(s, n.ID) != structs.NodeStatusReady }) {
				t.Fatalf("node marked %s before its deadline", nodeStatus(s, n.ID))
			}
			tc.pass(clock)
			WaitFor(t, 5*time.Second, func() (bool, string) {
				st := nodeStatus(s, n.ID)
				return st == structs.NodeStatusDown, "node still " + st
			})
			if got := lastEvent(t, s, n.ID).Message; got != "Node heartbeat missed" {
				t.Fatalf("last event %q", got)
			}
			if got := logs.lines(stallLog); len(got) != 0 {
				t.Fatalf("no stall happened, but one was logged: %q", got)
			}
		})
	}
}

// A disconnected node's second timer, for its disconnect window, runs late
// in a stall too: the node gets a fresh window rather than going down at
// once, and goes down when that window ends without a heartbeat.
func TestStallGivesADisconnectedNodeAFreshWindow(t *testing.T) {
	s, clock, logs := startStallServer(t)
	away, other, _ := disconnectOne(t, s, clock, 10*time.Minute)
	WaitFor(t, 5*time.Second, func() (bool, string) {
		return s.heartbeats.Armed(away.ID), "no timer for the disconnect window"
	})
	advanceKeeping(t, s, clock, untilWindowEnd(t, s, clock, away.ID, 10*time.Minute)-30*time.Second, other)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("node marked %s within its disconnect window", st)
	}

	// The stall runs past the end of the disconnect window.
	stallClock(clock, 3*time.Minute)
	heartbeatNode(t, s, other) // it was waiting in the socket
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("disconnected node marked %s for this server's own stall", st)
	}
	if !s.heartbeats.Armed(away.ID) {
		t.Fatal("disconnected node has no fresh window after the stall")
	}
	advanceKeeping(t, s, clock, stallTestFresh-time.Second, other)
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("node marked %s within its fresh window", st)
	}
	advanceKeeping(t, s, clock, 2*time.Second, other)
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := nodeStatus(s, away.ID)
		return st == structs.NodeStatusDown, "node still " + st
	})
	if got := lastEvent(t, s, away.ID).Message; got != "Node did not reconnect within its disconnect window" {
		t.Fatalf("last event %q", got)
	}
	if st := nodeStatus(s, other.ID); st != structs.NodeStatusReady {
		t.Fatalf("the node that kept beating is %s", st)
	}
	if got := logs.lines(stallLog); len(got) != 1 {
		t.Fatalf("want the stall logged once, got %q", got)
	}
}

// Stalls in a row give a silent node at most heartbeat.MaxStallWindows fresh
// windows: a server whose timers are always late still marks a dead node
// down.
func TestStallWindowsInARowAreBounded(t *testing.T) {
	s, clock, _ := startStallServer(t)
	n := itNode("n1")
	registerArmed(t, s, n)
	for i := 0; i < heartbeat.MaxStallWindows; i++ {
		stallClock(clock, 2*time.Minute)
		if st := nodeStatus(s, n.ID); st != structs.NodeStatusReady || !s.heartbeats.Armed(n.ID) {
			t.Fatalf("stall %d: node %s, armed %v; want ready with a fresh window", i+1, st, s.heartbeats.Armed(n.ID))
		}
	}
	stallClock(clock, 2*time.Minute)
	WaitFor(t, 5*time.Second, func() (bool, string) {
		st := nodeStatus(s, n.ID)
		return st == structs.NodeStatusDown, "node still " + st
	})
}
