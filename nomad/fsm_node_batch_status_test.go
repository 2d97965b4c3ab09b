package nomad

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

func applyNodeBatch(t *testing.T, f *fsm.FSM, index uint64, req *structs.NodeBatchUpdateStatusRequest) any {
	t.Helper()
	buf, err := raftlog.Encode(structs.NodeBatchUpdateStatusRequestType, req)
	if err != nil {
		t.Fatal(err)
	}
	return f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: buf})
}

// One entry marks each node with its own status, event and evals; a node
// that changed after the leader read it, or is gone, is skipped and
// reported, and the rest of the batch still applies.
func TestFSMNodeBatchStatusSkipsNodesThatChanged(t *testing.T) {
	f := testFSM(t)
	st := f.State()
	for i, id := range []string{"n1", "n2", "n3", "unread"} {
		if err := st.Write(uint64(i+1), func(tx *state.Txn) error { return tx.UpsertNode(fsmTestNode(id), nil) }); err != nil {
			t.Fatal(err)
		}
	}
	read := map[string]uint64{}
	for _, id := range []string{"n1", "n2", "n3"} {
		n, _ := st.NodeByID(nil, id)
		read[id] = n.ModifyIndex
	}
	// n2 changes after the leader's read.
	if err := st.Write(5, func(tx *state.Txn) error {
		return tx.UpdateNodeEligibility("n2", structs.NodeSchedulingIneligible, 0, nil)
	}); err != nil {
		t.Fatal(err)
	}
	ts := time.Unix(1_800_000_000, 0)
	update := func(id, status string) *structs.NodeUpdateStatusRequest {
		return &structs.NodeUpdateStatusRequest{NodeID: id, Status: status, UpdatedAt: ts.Unix(),
			NodeEvent: &structs.NodeEvent{Message: "Node heartbeat missed", Timestamp: ts},
			Evals: []*structs.Evaluation{{ID: "eval-" + id, Namespace: "default", JobID: "web", Type: "service", Priority: 50,
				TriggeredBy: structs.EvalTriggerNodeUpdate, NodeID: id, Status: structs.EvalStatusPending}}}
	}
	read["gone"] = 1
	resp := applyNodeBatch(t, f, 10, &structs.NodeBatchUpdateStatusRequest{
		Updates:           []*structs.NodeUpdateStatusRequest{update("n1", structs.NodeStatusDown), update("n2", structs.NodeStatusDown), update("gone", structs.NodeStatusDown), update("n3", structs.NodeStatusDisconnected), update("unread", structs.NodeStatusDown)},
		NodeModifyIndexes: read, // "unread" has no index: no condition, no mark
	})
	r, ok := resp.(*structs.NodeBatchUpdateStatusResponse)
	if !ok {
		t.Fatalf("apply answered %#v", resp)
	}
	if got := strings.Join(r.Skipped, ","); got != "n2,gone,unread" {
		t.Fatalf("skipped %q; want n2,gone,unread", got)
	}
	for id, want := range map[string]string{"n1": structs.NodeStatusDown, "n2": structs.NodeStatusReady, "n3": structs.NodeStatusDisconnected, "unread": structs.NodeStatusReady} {
		n, _ := st.NodeByID(nil, id)
		if n.Status != want {
			t.Fatalf("%s is %s; want %s", id, n.Status, want)
		}
		e, _ := st.EvalByID(nil, "eval-"+id)
		if (e != nil) != (id != "n2" && id != "unread") {
			t.Fatalf("%s: eval stored %v; want it only for the nodes marked", id, e != nil)
		}
		if id == "n2" || id == "unread" {
			continue
		}
		if n.ModifyIndex != 10 || n.StatusUpdatedAt != ts.Unix() || n.Events[len(n.Events)-1].Message != "Node heartbeat missed" {
			t.Fatalf("%s: index %d, updated %d, events %+v", id, n.ModifyIndex, n.StatusUpdatedAt, n.Events)
		}
	}
}

// A batch is only for the server's own marks: one that would make a node
// ready (which needs the ready-eval checks of a single update) is refused
// whole and changes nothing.
func TestFSMNodeBatchStatusRefusesReady(t *testing.T) {
	f := testFSM(t)
	st := f.State()
	for i, id := range []string{"n1", "n2"} {
		if err := st.Write(uint64(i+1), func(tx *state.Txn) error { return tx.UpsertNode(fsmTestNode(id), nil) }); err != nil {
			t.Fatal(err)
		}
	}
	resp := applyNodeBatch(t, f, 10, &structs.NodeBatchUpdateStatusRequest{Updates: []*structs.NodeUpdateStatusRequest{
		{NodeID: "n1", Status: structs.NodeStatusDown}, {NodeID: "n2", Status: structs.NodeStatusReady}}})
	err, ok := resp.(error)
	if !ok || !strings.Contains(err.Error(), `status "ready"`) || !strings.Contains(err.Error(), "only marks nodes down or disconnected") {
		t.Fatalf("apply answered %v; want a refusal naming the status", resp)
	}
	if n, _ := st.NodeByID(nil, "n1"); n.Status != structs.NodeStatusReady {
		t.Fatalf("a refused batch changed n1 to %s", n.Status)
	}
}
