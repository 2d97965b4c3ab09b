package scheduler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/scheduler/reconciler"
	"github.com/drover-sched/drover/structs"
)

// disconnectSetup runs a count-2 service job with a disconnect block on 3
// nodes, reports every alloc running, and disconnects the node of one of
// them. It returns the job, that alloc and its node.
func disconnectSetup(t *testing.T, h *Harness, replace bool, reconcile string) (*structs.Job, *structs.Allocation, string) {
	t.Helper()
	h.Nodes(3)
	j := serviceJob(2)
	j.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: 10 * time.Minute, Replace: structs.BoolPtr(replace), Reconcile: reconcile}
	j.Canonicalize()
	job := h.Job(j)
	h.Run(job, structs.EvalTriggerJobRegister)
	h.ClientAll(job, structs.AllocClientStatusRunning, func(*structs.Allocation) bool { return true })
	orig := h.Live(job)[0]
	h.Now = h.Now.Add(time.Minute)
	h.NodeStatus(orig.NodeID, structs.NodeStatusDisconnected)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	return job, h.Alloc(orig.ID), orig.NodeID
}

func replacementOf(h *Harness, job *structs.Job, orig *structs.Allocation) *structs.Allocation {
	for _, a := range h.Allocs(job) {
		if a.PreviousAllocation == orig.ID {
			return a
		}
	}
	return nil
}

func TestDisconnectMarksUnknownReplacesAndSchedulesTimeout(t *testing.T) {
	h := NewHarness(t)
	job, orig, _ := disconnectSetup(t, h, true, "")
	if orig.ClientStatus != structs.AllocClientStatusUnknown || orig.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("original = %s/%s, want run/unknown", orig.DesiredStatus, orig.ClientStatus)
	}
	if s := orig.LastClientStatusState(); s == nil || s.Value != structs.AllocClientStatusUnknown || !s.Time.Equal(h.Now) {
		t.Fatalf("AllocStates = %+v", orig.AllocStates)
	}
	timeouts := h.CreatedBy(structs.EvalTriggerMaxDisconnectTimeout)
	if len(timeouts) != 1 || !timeouts[0].WaitUntil.Equal(h.Now.Add(10*time.Minute)) || orig.FollowupEvalID != timeouts[0].ID {
		t.Fatalf("timeout evals %+v, FollowupEvalID %s", timeouts, orig.FollowupEvalID)
	}
	repl := replacementOf(h, job, orig)
	if repl == nil || repl.Name != orig.Name || repl.NodeID == orig.NodeID || orig.NextAllocation != repl.ID {
		t.Fatalf("replacement = %+v (original NextAllocation %q)", repl, orig.NextAllocation)
	}
	if repl.RescheduleTracker == nil || len(repl.RescheduleTracker.Events) != 1 {
		t.Fatalf("replacement tracker = %+v", repl.RescheduleTracker)
	}
}

func TestDisconnectWithoutReplaceWaits(t *testing.T) {
	h := NewHarness(t)
	job, orig, _ := disconnectSetup(t, h, false, "")
	if replacementOf(h, job, orig) != nil || len(h.Live(job)) != 2 {
		t.Fatalf("replace=false placed a replacement: %s", names(h.Allocs(job)))
	}
	// The window expires: the alloc is lost and only now replaced.
	timeout := h.CreatedBy(structs.EvalTriggerMaxDisconnectTimeout)[0]
	h.Now = timeout.WaitUntil
	h.Process(timeout)
	o := h.Alloc(orig.ID)
	if o.ClientStatus != structs.AllocClientStatusLost || o.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("expired original = %s/%s", o.DesiredStatus, o.ClientStatus)
	}
	if replacementOf(h, job, orig) == nil {
		t.Fatalf("expired alloc not replaced: %s", names(h.Allocs(job)))
	}
}

func TestDisconnectTimeoutMakesUnknownLostWithoutASecondReplacement(t *testing.T) {
	h := NewHarness(t)
	job, orig, _ := disconnectSetup(t, h, true, "")
	timeout := h.CreatedBy(structs.EvalTriggerMaxDisconnectTimeout)[0]
	h.Now = timeout.WaitUntil
	h.Process(timeout)
	if o := h.Alloc(orig.ID); o.ClientStatus != structs.AllocClientStatusLost {
		t.Fatalf("original = %s", o.ClientStatus)
	}
	if live := h.Live(job); len(live) != 2 {
		t.Fatalf("live = %s", names(live))
	}
}

func TestUnknownAllocOnAReadyNodeIsLeftAloneUntilItsClientReports(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := disconnectSetup(t, h, true, "")
	h.NodeStatus(node, structs.NodeStatusReady)
	before := len(h.Allocs(job))
	h.Run(job, structs.EvalTriggerNodeUpdate)
	if o := h.Alloc(orig.ID); o.ClientStatus != structs.AllocClientStatusUnknown || o.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("unreported original touched: %s/%s", o.DesiredStatus, o.ClientStatus)
	}
	if got := len(h.Allocs(job)); got != before {
		t.Fatalf("allocs went from %d to %d", before, got)
	}
}

func TestReconnectChoosesBetweenOriginalAndReplacement(t *testing.T) {
	cases := []struct {
		name      string
		policy    string
		keepsOrig bool
	}{
		{"keep_original keeps the alloc that was disconnected", structs.ReconcileKeepOriginal, true},
		{"keep_replacement keeps the alloc placed meanwhile", structs.ReconcileKeepReplacement, false},
		{"longest_running keeps the original, which started first", structs.ReconcileLongestRunning, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHarness(t)
			job, orig, node := disconnectSetup(t, h, true, tc.policy)
			repl := replacementOf(h, job, orig)
			h.Now = h.Now.Add(time.Minute)
			h.Client(repl, structs.AllocClientStatusRunning)
			// The client comes back: heartbeat first, then its report.
			h.Now = h.Now.Add(time.Minute)
			h.NodeStatus(node, structs.NodeStatusReady)
			h.Client(h.Alloc(orig.ID), structs.AllocClientStatusRunning)
			h.Run(job, structs.EvalTriggerReconnect)

			o, r := h.Alloc(orig.ID), h.Alloc(repl.ID)
			winner, loser := o, r
			if !tc.keepsOrig {
				winner, loser = r, o
			}
			if winner.DesiredStatus != structs.AllocDesiredStatusRun || loser.DesiredStatus != structs.AllocDesiredStatusStop {
				t.Fatalf("winner %s, loser %s", winner.DesiredStatus, loser.DesiredStatus)
			}
			if len(h.Live(job)) != 2 {
				t.Fatalf("live = %s", names(h.Live(job)))
			}
			if s := o.LastClientStatusState(); s == nil || s.Value != structs.AllocClientStatusRunning || !s.Time.Equal(h.Now) || o.NeedsToReconnect() {
				t.Fatalf("reconnect not recorded: %+v", o.AllocStates)
			}
			timeout := h.CreatedBy(structs.EvalTriggerMaxDisconnectTimeout)[0]
			if c := h.LastUpdate(timeout.ID); c.Status != structs.EvalStatusCancelled {
				t.Fatalf("timeout eval = %s, want canceled", c.Status)
			}
			// A later eval does not reconnect again.
			n := len(h.Plans)
			h.Run(job, structs.EvalTriggerNodeUpdate)
			if len(h.Plans) != n {
				t.Fatalf("a later eval submitted %+v", h.LastPlan())
			}
		})
	}
}

func TestReconnectBestScoreKeepsExactlyOne(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := disconnectSetup(t, h, true, structs.ReconcileBestScore)
	repl := replacementOf(h, job, orig)
	h.Client(repl, structs.AllocClientStatusRunning)
	h.NodeStatus(node, structs.NodeStatusReady)
	h.Client(h.Alloc(orig.ID), structs.AllocClientStatusRunning)
	h.Run(job, structs.EvalTriggerReconnect)
	o, r := h.Alloc(orig.ID), h.Alloc(repl.ID)
	if o.TerminalStatus() == r.TerminalStatus() {
		t.Fatalf("want exactly one kept: original %s, replacement %s", o.DesiredStatus, r.DesiredStatus)
	}
	if len(h.Live(job)) != 2 {
		t.Fatalf("live = %s", names(h.Live(job)))
	}
}

func TestReconnectReplacementOnANewerVersionWins(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := disconnectSetup(t, h, true, structs.ReconcileKeepOriginal)
	// A job update while the node is away replaces what it can reach.
	up := job.Copy()
	up.TaskGroups[0].Tasks[0].Env = map[string]string{"V": "2"}
	job = h.Job(up)
	h.Run(job, structs.EvalTriggerJobRegister)
	h.ClientAll(job, structs.AllocClientStatusRunning, func(a *structs.Allocation) bool {
		return a.ClientStatus == structs.AllocClientStatusPending && !a.TerminalStatus()
	})
	h.NodeStatus(node, structs.NodeStatusReady)
	h.Client(h.Alloc(orig.ID), structs.AllocClientStatusRunning)
	h.Run(job, structs.EvalTriggerReconnect)
	if o := h.Alloc(orig.ID); o.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("old-version original kept over a newer replacement: %s", names(h.Allocs(job)))
	}
	for _, a := range h.Live(job) {
		if a.Job.Version != job.Version {
			t.Fatalf("%s runs version %d", a.Name, a.Job.Version)
		}
	}
}

func TestReconnectedAllocThatFailedIsRescheduled(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := disconnectSetup(t, h, false, "")
	h.NodeStatus(node, structs.NodeStatusReady)
	h.Client(h.Alloc(orig.ID), structs.AllocClientStatusFailed)
	h.Now = h.Now.Add(time.Minute) // past the 30s service delay
	h.Run(job, structs.EvalTriggerReconnect)
	repl := replacementOf(h, job, orig)
	if repl == nil {
		t.Fatalf("failed reconnect not rescheduled: %s", names(h.Allocs(job)))
	}
	o := h.Alloc(orig.ID)
	if o.NeedsToReconnect() || o.ClientStatus != structs.AllocClientStatusFailed {
		t.Fatalf("original = %s, states %+v", o.ClientStatus, o.AllocStates)
	}
}

// An unknown alloc on a node that is ready again is not left alone forever:
// the evaluation of the node's return creates a follow-up due when the
// report window ends, and that follow-up marks the alloc lost (its
// replacement keeps running, nothing more is placed) without any new job
// change or report.
func TestUnreportedAllocOnAReadyNodeIsLostWhenItsReportWindowEnds(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := disconnectSetup(t, h, true, "")
	h.Now = h.Now.Add(2 * time.Minute)
	h.NodeStatus(node, structs.NodeStatusReady)
	readyAt := h.Now
	h.Run(job, structs.EvalTriggerNodeUpdate)
	timeouts := h.CreatedBy(structs.EvalTriggerReconnectReportTimeout)
	if len(timeouts) != 1 || !timeouts[0].WaitUntil.Equal(readyAt.Add(reconciler.DefaultReportWindow)) {
		t.Fatalf("want one report timeout due %v after the node came back, got %+v", reconciler.DefaultReportWindow, timeouts)
	}
	// Another evaluation inside the window neither acts nor adds a timeout.
	h.Now = h.Now.Add(time.Minute)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	if o := h.Alloc(orig.ID); o.ClientStatus != structs.AllocClientStatusUnknown || o.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("unreported original touched inside its window: %s/%s", o.DesiredStatus, o.ClientStatus)
	}
	if got := len(h.CreatedBy(structs.EvalTriggerReconnectReportTimeout)); got != 1 {
		t.Fatalf("%d report timeouts, want still 1", got)
	}

	h.Now = timeouts[0].WaitUntil
	h.Process(timeouts[0])
	o := h.Alloc(orig.ID)
	if o.ClientStatus != structs.AllocClientStatusLost || o.DesiredStatus != structs.AllocDesiredStatusStop || o.DesiredDescription != reconciler.DescUnreported {
		t.Fatalf("original after its report window = %s/%s %q", o.DesiredStatus, o.ClientStatus, o.DesiredDescription)
	}
	if live := h.Live(job); len(live) != 2 {
		t.Fatalf("live = %s, want the count of 2", names(live))
	}
}

// The window comes from the scheduler's Config.
func TestReconnectReportWindowComesFromTheConfig(t *testing.T) {
	h := NewHarness(t)
	job, orig, node := disconnectSetup(t, h, true, "")
	h.NodeStatus(node, structs.NodeStatusReady)
	h.Now = h.Now.Add(30 * time.Second)
	e := h.Eval(job, structs.EvalTriggerNodeUpdate)
	s, err := NewScheduler(e.Type, Config{State: h.snapshot(), Planner: h, Now: h.Now, ReconnectReportWindow: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Process(e); err != nil {
		t.Fatal(err)
	}
	if o := h.Alloc(orig.ID); o.ClientStatus != structs.AllocClientStatusLost {
		t.Fatalf("original = %s, want lost after a 30s window", o.ClientStatus)
	}
}

// A pending alloc (never reported started) on a node that disconnects is
// lost and replaced at once, even with a disconnect window and replace =
// false: there is nothing on its client to reconnect to.
func TestPendingAllocOnADisconnectedNodeIsLostAndReplaced(t *testing.T) {
	h := NewHarness(t)
	h.Nodes(3)
	j := serviceJob(2)
	j.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: 10 * time.Minute, Replace: structs.BoolPtr(false)}
	j.Canonicalize()
	job := h.Job(j)
	h.Run(job, structs.EvalTriggerJobRegister)
	orig := h.Live(job)[0] // still pending
	h.NodeStatus(orig.NodeID, structs.NodeStatusDisconnected)
	h.Run(job, structs.EvalTriggerNodeUpdate)
	o := h.Alloc(orig.ID)
	if o.ClientStatus != structs.AllocClientStatusLost || o.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("pending alloc on the disconnected node = %s/%s, want stop/lost", o.DesiredStatus, o.ClientStatus)
	}
	r := replacementOf(h, job, orig)
	if r == nil || r.NodeID == orig.NodeID {
		t.Fatalf("no replacement off the disconnected node: %s", names(h.Allocs(job)))
	}
	if live := h.Live(job); len(live) != 2 {
		t.Fatalf("live = %s, want 2", names(live))
	}
	if got := len(h.CreatedBy(structs.EvalTriggerMaxDisconnectTimeout)); got != 0 {
		t.Fatalf("%d disconnect timeouts for a lost alloc", got)
	}
}
