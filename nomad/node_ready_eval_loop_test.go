package nomad

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// itJobOfType is a system or sysbatch job of the mock driver.
func itJobOfType(id, typ string) *structs.Job {
	j := itJob(id, 1)
	j.Type = typ
	return j
}

// readyEvals returns the node-update evals for node, per job ID.
func readyEvals(t *testing.T, s *Server, nodeID string, skip map[string]bool) map[string]int {
	t.Helper()
	it, err := s.State().Evals(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		e := raw.(*structs.Evaluation)
		if e.NodeID == nodeID && e.TriggeredBy == structs.EvalTriggerNodeUpdate && !skip[e.ID] {
			out[e.JobID]++
		}
	}
	return out
}

// evalIDs returns the IDs of every eval in the state.
func evalIDs(t *testing.T, s *Server) map[string]bool {
	t.Helper()
	it, err := s.State().Evals(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		out[raw.(*structs.Evaluation).ID] = true
	}
	return out
}

func setNodeStatus(t *testing.T, s *Server, n *structs.Node, status string) {
	t.Helper()
	var resp structs.NodeUpdateResponse
	req := &structs.NodeUpdateStatusRequest{NodeID: n.ID, SecretID: n.SecretID, Status: status}
	if err := s.RPC("Node.UpdateStatus", req, &resp); err != nil {
		t.Fatalf("status %s for %s: %v", status, n.ID, err)
	}
}

func liveOn(t *testing.T, s *Server, jobID, nodeID string) int {
	n := 0
	for _, a := range desiredRunning(jobAllocs(t, s, jobID)) {
		if a.NodeID == nodeID {
			n++
		}
	}
	return n
}

// The ready-node eval loop: a node that becomes ready again, or registers
// ready, gets exactly one node-update eval for every system and sysbatch
// job (none for a stopped one, none for a service job with nothing on it),
// and the system schedulers then run each of those jobs on it.
func TestNodeBecomingReadyEvaluatesEverySystemAndSysbatchJob(t *testing.T) {
	t.Parallel()
	s, clock := startFakeClockServer(t)
	n1, n2 := itNode("n1"), itNode("n2")
	registerNode(t, s, n1)
	registerNode(t, s, n2)
	// Two system jobs had an alloc on n2 before it went away: one that
	// is lost with its node, and one whose group waits for a disconnected
	// node (its alloc is still unknown on n2 when n2 is back, so the job
	// gets its eval from the node's allocs and must not get a second).
	registerJob(t, s, itJobOfType("sys-before", structs.JobTypeSystem))
	waiting := itJobOfType("sys-waiting", structs.JobTypeSystem)
	waiting.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{LostAfter: time.Hour}
	registerJob(t, s, waiting)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		return liveOn(t, s, "sys-before", n2.ID) == 1 && liveOn(t, s, "sys-waiting", n2.ID) == 1, "system jobs not placed on n2"
	})
	for _, a := range desiredRunning(jobAllocs(t, s, "sys-waiting")) {
		if err := reportAlloc(s, a, structs.AllocClientStatusRunning); err != nil { // pending ones are lost at once
			t.Fatal(err)
		}
	}
	expireNode(t, s, clock, n2.ID, n1) // a missed heartbeat: disconnected
	if st := nodeStatus(s, n2.ID); st != structs.NodeStatusDisconnected {
		t.Fatalf("n2 is %s, want disconnected", st)
	}
	WaitFor(t, 10*time.Second, func() (bool, string) {
		var st string
		for _, a := range jobAllocs(t, s, "sys-waiting") {
			if a.NodeID == n2.ID {
				st = a.ClientStatus
			}
		}
		return liveOn(t, s, "sys-before", n2.ID) == 0 && st == structs.AllocClientStatusUnknown,
			"sys-before still wanted on the disconnected node, or sys-waiting's alloc there is " + st
	})

	// Registered while n2 is down: nothing of theirs runs there yet.
	registerJob(t, s, itJobOfType("sys", structs.JobTypeSystem))
	registerJob(t, s, itJobOfType("batch-sys", structs.JobTypeSysBatch))
	stopped := itJobOfType("stopped-sys", structs.JobTypeSystem)
	registerJob(t, s, stopped)
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: stopped.ID}, &dresp); err != nil {
		t.Fatal(err)
	}
	registerJob(t, s, itJob("svc", 1))
	for _, id := range []string{"sys", "batch-sys", "stopped-sys", "svc", "sys-before", "sys-waiting"} {
		WaitFor(t, 10*time.Second, func() (bool, string) { return allEvalsDone(s, id) })
	}
	if liveOn(t, s, "sys", n2.ID)+liveOn(t, s, "batch-sys", n2.ID)+liveOn(t, s, "sys-before", n2.ID) != 0 {
		t.Fatal("a system job runs on the down node")
	}

	before := evalIDs(t, s)
	setNodeStatus(t, s, n2, structs.NodeStatusReady)
	got := readyEvals(t, s, n2.ID, before)
	want := map[string]int{"sys": 1, "batch-sys": 1, "sys-before": 1, "sys-waiting": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("evals for n2 becoming ready: %v, want %v", got, want)
	}
	for _, id := range []string{"sys", "batch-sys", "sys-before"} {
		WaitFor(t, 10*time.Second, func() (bool, string) {
			return liveOn(t, s, id, n2.ID) == 1, id + " not placed on n2 after it came back"
		})
	}

	// A new node registering ready gets the same.
	n3 := itNode("n3")
	before = evalIDs(t, s)
	registerNode(t, s, n3)
	got = readyEvals(t, s, n3.ID, before)
	want = map[string]int{"sys": 1, "batch-sys": 1, "sys-before": 1, "sys-waiting": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("evals for n3 registering: %v, want %v", got, want)
	}
	var placed []string
	WaitFor(t, 10*time.Second, func() (bool, string) {
		placed = placed[:0]
		for _, id := range []string{"sys", "batch-sys", "sys-before", "sys-waiting"} {
			if liveOn(t, s, id, n3.ID) == 1 {
				placed = append(placed, id)
			}
		}
		sort.Strings(placed)
		return len(placed) == 4, fmt.Sprintf("placed on n3: %v", placed)
	})
}
