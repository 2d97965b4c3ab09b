package reconciler

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func TestClassify(t *testing.T) {
	service := withDisconnect(testJob(structs.JobTypeService, 3), 10*time.Minute, true, "")
	plain := testJob(structs.JobTypeService, 3)
	batch := testJob(structs.JobTypeBatch, 3)
	older := nextVersion(batch, nil)
	noLost := testJob(structs.JobTypeService, 3)
	noLost.TaskGroups[0].PreventRescheduleOnLost = true

	ready := testNode("n1", structs.NodeStatusReady)
	down := testNode("n1", structs.NodeStatusDown)
	disc := testNode("n1", structs.NodeStatusDisconnected)
	disconnectedSince := func(at time.Time) *structs.Node {
		n := testNode("n1", structs.NodeStatusDisconnected)
		n.StatusUpdatedAt = at.Unix()
		return n
	}
	readySince := func(at time.Time) *structs.Node {
		n := testNode("n1", structs.NodeStatusReady)
		n.StatusUpdatedAt = at.Unix()
		return n
	}
	draining := testNode("n1", structs.NodeStatusReady)
	draining.DrainStrategy = &structs.DrainStrategy{}
	pastDeadline := testNode("n1", structs.NodeStatusReady)
	pastDeadline.DrainStrategy = &structs.DrainStrategy{ForceDeadline: t0.Add(-time.Second)}

	mk := func(job *structs.Job, status string, change func(a *structs.Allocation)) *structs.Allocation {
		a := &structs.Allocation{ID: "a1", Name: "web.web[0]", JobID: job.ID, Job: job, TaskGroup: "web", NodeID: "n1",
			DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: status}
		if change != nil {
			change(a)
		}
		return a
	}
	unknownSince := func(at time.Time) func(a *structs.Allocation) {
		return func(a *structs.Allocation) {
			a.AppendState(structs.AllocStateFieldClientStatus, structs.AllocClientStatusUnknown, at)
		}
	}
	running, unknown := structs.AllocClientStatusRunning, structs.AllocClientStatusUnknown

	cases := []struct {
		name  string
		job   *structs.Job
		alloc *structs.Allocation
		node  *structs.Node
		batch bool
		want  Bucket
	}{
		{"a running alloc on a ready node is untainted", service, mk(service, running, nil), ready, false, Untainted},
		{"a pending alloc on a ready node is untainted", service, mk(service, structs.AllocClientStatusPending, nil), ready, false, Untainted},
		{"an alloc the servers stopped is ignored even while it still runs", service,
			mk(service, running, func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop }), ready, false, Ignore},
		{"an evicted alloc is ignored", service,
			mk(service, running, func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusEvict }), ready, false, Ignore},
		{"an alloc with a migrate transition migrates", service,
			mk(service, running, func(a *structs.Allocation) { a.DesiredTransition.Migrate = structs.BoolPtr(true) }), ready, false, Migrate},
		{"an alloc on a draining node keeps its slot until the drainer marks it", service, mk(service, running, nil), draining, false, Untainted},
		{"an alloc on a node past its drain deadline migrates", service, mk(service, running, nil), pastDeadline, false, Migrate},
		{"an alloc on a down node is lost", service, mk(service, running, nil), down, false, Lost},
		{"an alloc whose node was garbage-collected is lost", service, mk(service, running, nil), nil, false, Lost},
		{"an alloc on a disconnected node without lost_after is lost", plain, mk(plain, running, nil), disc, false, Lost},
		{"a running alloc on a disconnected node with lost_after is disconnecting", service, mk(service, running, nil), disc, false, Disconnecting},
		{"a pending alloc on a disconnected node is lost, even with lost_after", service, mk(service, structs.AllocClientStatusPending, nil), disc, false, Lost},
		{"a pending alloc on a disconnected node of a group that prevents rescheduling on lost is disconnecting", noLost,
			mk(noLost, structs.AllocClientStatusPending, nil), disc, false, Disconnecting},
		{"an unknown alloc inside its window waits as unknown", service,
			mk(service, unknown, unknownSince(t0.Add(-time.Minute))), disc, false, Unknown},
		{"an unknown alloc past lost_after has expired", service,
			mk(service, unknown, unknownSince(t0.Add(-11*time.Minute))), disc, false, Expired},
		{"an unknown alloc named by the eval being processed has expired even if the clock is early", service,
			mk(service, unknown, func(a *structs.Allocation) {
				unknownSince(t0.Add(-time.Minute))(a)
				a.FollowupEvalID = "eval-0"
			}), disc, false, Expired},
		{"an unknown alloc with no history waits from when it was last modified", service,
			mk(service, unknown, func(a *structs.Allocation) { a.ModifyTime = t0.Add(-time.Minute).UnixNano() }), disc, false, Unknown},
		{"an unknown alloc with no history expires lost_after after it was last modified", service,
			mk(service, unknown, func(a *structs.Allocation) { a.ModifyTime = t0.Add(-11 * time.Minute).UnixNano() }), disc, false, Expired},
		{"an unknown alloc with no history or modify time waits from its node's disconnect", service,
			mk(service, unknown, nil), disconnectedSince(t0.Add(-time.Minute)), false, Unknown},
		{"an unknown alloc with no history or modify time expires lost_after after its node's disconnect", service,
			mk(service, unknown, nil), disconnectedSince(t0.Add(-11 * time.Minute)), false, Expired},
		{"an unknown alloc with no time at all waits (its node going down bounds it)", service,
			mk(service, unknown, nil), disc, false, Unknown},
		{"an unknown alloc whose node went down is lost", service,
			mk(service, unknown, unknownSince(t0.Add(-time.Minute))), down, false, Lost},
		{"an unknown alloc on a ready node whose client has not reported is ignored", service,
			mk(service, unknown, unknownSince(t0.Add(-time.Minute))), ready, false, Ignore},
		{"an unknown alloc on a node ready for longer than the report window has expired", service,
			mk(service, unknown, unknownSince(t0.Add(-10*time.Minute))), readySince(t0.Add(-DefaultReportWindow)), false, Expired},
		{"an unknown alloc on a node ready for less than the report window is ignored", service,
			mk(service, unknown, unknownSince(t0.Add(-10*time.Minute))), readySince(t0.Add(-DefaultReportWindow + time.Second)), false, Ignore},
		{"the report window runs from the mark when the node's status is older", service,
			mk(service, unknown, unknownSince(t0.Add(-time.Minute))), readySince(t0.Add(-time.Hour)), false, Ignore},
		{"the report window bounds groups that prevent rescheduling on lost too", noLost,
			mk(noLost, unknown, unknownSince(t0.Add(-time.Hour))), readySince(t0.Add(-DefaultReportWindow)), false, Expired},
		{"an alloc reported running after a disconnect on a ready node is reconnecting", service,
			mk(service, running, unknownSince(t0.Add(-time.Minute))), ready, false, Reconnecting},
		{"an alloc reported failed after a disconnect is still reconnecting", service,
			mk(service, structs.AllocClientStatusFailed, unknownSince(t0.Add(-time.Minute))), ready, false, Reconnecting},
		{"an alloc already reconnected is untainted", service,
			mk(service, running, func(a *structs.Allocation) {
				unknownSince(t0.Add(-time.Minute))(a)
				a.AppendState(structs.AllocStateFieldClientStatus, running, t0)
			}), ready, false, Untainted},
		{"a reported alloc whose node disconnected again is disconnecting", service,
			mk(service, running, unknownSince(t0.Add(-time.Minute))), disc, false, Disconnecting},
		{"a reconnecting alloc the servers stopped meanwhile is ignored", service,
			mk(service, running, func(a *structs.Allocation) {
				unknownSince(t0.Add(-time.Minute))(a)
				a.DesiredStatus = structs.AllocDesiredStatusStop
			}), ready, false, Ignore},
		{"a failed alloc not yet replaced is failed", service, mk(service, structs.AllocClientStatusFailed, nil), ready, false, Failed},
		{"a failed alloc on a down node is failed, not lost", service, mk(service, structs.AllocClientStatusFailed, nil), down, false, Failed},
		{"a failed alloc already replaced is ignored", service,
			mk(service, structs.AllocClientStatusFailed, func(a *structs.Allocation) { a.NextAllocation = "a2" }), ready, false, Ignore},
		{"a completed batch alloc of the current version holds its slot", batch,
			mk(batch, structs.AllocClientStatusComplete, nil), ready, true, Untainted},
		{"a completed batch alloc on a down node still holds its slot", batch,
			mk(batch, structs.AllocClientStatusComplete, nil), down, true, Untainted},
		{"a completed batch alloc of an older version is ignored", older,
			mk(batch, structs.AllocClientStatusComplete, nil), ready, true, Ignore},
		{"a completed service alloc is ignored", service, mk(service, structs.AllocClientStatusComplete, nil), ready, false, Ignore},
		{"a lost alloc is ignored", service,
			mk(service, structs.AllocClientStatusLost, func(a *structs.Allocation) { a.DesiredStatus = structs.AllocDesiredStatusStop }), ready, false, Ignore},
		{"a running alloc on a down node of a group that prevents rescheduling on lost is disconnecting", noLost,
			mk(noLost, running, nil), down, false, Disconnecting},
		{"an unknown alloc of such a group never expires", noLost,
			mk(noLost, unknown, unknownSince(t0.Add(-100*time.Hour))), down, false, Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Classifier{Job: tc.job, Batch: tc.batch, EvalID: "eval-0", Now: t0}
			if got := c.Classify(tc.alloc, tc.node); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSortIntoKeepsEveryAllocInExactlyOneBucketInNameOrder(t *testing.T) {
	w := newWorld(testJob(structs.JobTypeService, 3), "n1", "n2")
	w.setNode("n2", structs.NodeStatusDown)
	a2 := w.add(2, "n1", structs.AllocClientStatusRunning)
	a0 := w.add(0, "n1", structs.AllocClientStatusRunning)
	l1 := w.add(1, "n2", structs.AllocClientStatusRunning)
	b := SortInto(w.allocs, w.nodes, Classifier{Job: w.job, Now: t0})
	equalStrings(t, "untainted", b.Untainted.IDs(), []string{a0.ID, a2.ID})
	equalStrings(t, "lost", b.Lost.IDs(), []string{l1.ID})
	total := 0
	for k := Untainted; k <= Ignore; k++ {
		total += len(b.Get(k))
	}
	if total != 3 {
		t.Fatalf("buckets hold %d allocs, want 3", total)
	}
}
