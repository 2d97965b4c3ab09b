package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/scheduler/reconciler"
	"github.com/drover-sched/drover/structs"
)

// A node comes back from a disconnect and keeps heartbeating, but its
// client never reports the unknown alloc. With nothing else happening to
// the job, the follow-up eval the scheduler left marks the alloc lost once
// the report window has passed, freeing its slot; its replacement keeps
// running. One real server, its broker and workers, on a fake clock.
func TestUnreportedAllocIsLostAfterTheReportWindowWithoutAJobChange(t *testing.T) {
	s, clock := startFakeClockServer(t)
	away, other, orig := disconnectOne(t, s, clock, 10*time.Minute)
	advanceKeeping(t, s, clock, time.Minute, other)
	heartbeatNode(t, s, away)

	var timeout *structs.Evaluation
	WaitFor(t, 10*time.Second, func() (bool, string) {
		evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, "web")
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if e.TriggeredBy == structs.EvalTriggerReconnectReportTimeout && e.Status == structs.EvalStatusPending {
				timeout = e
			}
		}
		return timeout != nil, "no report timeout eval yet"
	})
	readyAt := clock.Now()
	if d := timeout.WaitUntil.Sub(readyAt); d < reconciler.DefaultReportWindow-10*time.Second || d > reconciler.DefaultReportWindow {
		t.Fatalf("report timeout due %v after the node came back, want about %v", d, reconciler.DefaultReportWindow)
	}
	if a, _ := s.State().AllocByID(nil, orig.ID); a.ClientStatus != structs.AllocClientStatusUnknown || a.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("unreported alloc touched inside its window: %s/%s", a.DesiredStatus, a.ClientStatus)
	}

	advanceKeeping(t, s, clock, timeout.WaitUntil.Sub(clock.Now())+time.Second, other, away)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		a, _ := s.State().AllocByID(nil, orig.ID)
		live := desiredRunning(jobAllocs(t, s, "web"))
		return a.ClientStatus == structs.AllocClientStatusLost && a.DesiredDescription == reconciler.DescUnreported &&
				len(live) == 1 && live[0].ID != orig.ID,
			fmt.Sprintf("original %s/%s %q, %d live", a.DesiredStatus, a.ClientStatus, a.DesiredDescription, len(live))
	})
	if st := nodeStatus(s, away.ID); st != structs.NodeStatusReady {
		t.Fatalf("the beating node is %s", st)
	}
}
