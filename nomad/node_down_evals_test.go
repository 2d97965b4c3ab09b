package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// A node whose client says it is down (Node.UpdateStatus with its secret)
// gets node-update evals for its jobs in the same entry, as a node that
// misses its heartbeat does: its allocs are lost and replaced without
// waiting for some other change to the job.
func TestNodeThatSaysItIsDownHasItsWorkReplaced(t *testing.T) {
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = time.Hour })
	WaitForLeader(t, 5*time.Second, s)
	n1, n2 := itNode("n1"), itNode("n2")
	registerNode(t, s, n1)
	registerJob(t, s, itJob("web", 2))
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		return len(live) == 2, fmt.Sprintf("%d live allocs", len(live))
	})
	registerNode(t, s, n2)

	var resp structs.NodeUpdateResponse
	req := &structs.NodeUpdateStatusRequest{NodeID: n1.ID, SecretID: n1.SecretID, Status: structs.NodeStatusDown}
	if err := s.RPC("Node.UpdateStatus", req, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.EvalIDs) != 1 || resp.EvalCreateIndex != resp.NodeModifyIndex {
		t.Fatalf("marking the node down made evals %v at %d, node written at %d; want one eval in the same entry",
			resp.EvalIDs, resp.EvalCreateIndex, resp.NodeModifyIndex)
	}
	eval, err := s.State().EvalByID(nil, resp.EvalIDs[0])
	if err != nil || eval == nil || eval.JobID != "web" || eval.TriggeredBy != structs.EvalTriggerNodeUpdate || eval.NodeID != n1.ID {
		t.Fatalf("eval %v: %+v", err, eval)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		lost, onN2 := 0, 0
		for _, a := range jobAllocs(t, s, "web") {
			switch {
			case a.NodeID == n1.ID && a.ClientStatus == structs.AllocClientStatusLost:
				lost++
			case a.NodeID == n2.ID && a.DesiredStatus == structs.AllocDesiredStatusRun:
				onN2++
			}
		}
		return lost == 2 && onN2 == 2, fmt.Sprintf("%d lost on n1, %d placed on n2", lost, onN2)
	})
}
