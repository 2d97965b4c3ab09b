package nomad

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/structs"
)

func itSystemJob(id string) *structs.Job {
	j := itJob(id, 1)
	j.Type = structs.JobTypeSystem
	return j
}

// readyNodeCase makes node n ready on s, the way a client does, and
// returns the answer of the call that made it ready.
type readyNodeCase struct {
	name  string
	ready func(t *testing.T, s *Server, n *structs.Node) *structs.NodeUpdateResponse
}

var readyNodeCases = []readyNodeCase{
	{"a new node registering ready", func(t *testing.T, s *Server, n *structs.Node) *structs.NodeUpdateResponse {
		return registerNode(t, s, n)
	}},
	{"a down node heartbeating", func(t *testing.T, s *Server, n *structs.Node) *structs.NodeUpdateResponse {
		registerNode(t, s, n)
		var resp structs.NodeUpdateResponse
		down := &structs.NodeUpdateStatusRequest{NodeID: n.ID, SecretID: n.SecretID, Status: structs.NodeStatusDown}
		if err := s.RPC("Node.UpdateStatus", down, &resp); err != nil {
			t.Fatalf("marking the node down: %v", err)
		}
		resp = structs.NodeUpdateResponse{}
		up := &structs.NodeUpdateStatusRequest{NodeID: n.ID, SecretID: n.SecretID, Status: structs.NodeStatusReady}
		if err := s.RPC("Node.UpdateStatus", up, &resp); err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
		return &resp
	}},
}

// A node becoming ready and the evals that give it its system work are
// one raft entry: the status and the evals carry the same index, and the
// answer names that one index for both.
func TestNodeBecomingReadyWritesStatusAndEvalsInOneEntry(t *testing.T) {
	for _, tc := range readyNodeCases {
		t.Run(tc.name, func(t *testing.T) {
			// No workers: the evals stay as the entry wrote them.
			s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
			WaitForLeader(t, 5*time.Second, s)
			sys := itSystemJob("sys")
			registerJob(t, s, sys)

			resp := tc.ready(t, s, itNode("n1"))
			if len(resp.EvalIDs) != 1 {
				t.Fatalf("want one eval (for the system job), got %v", resp.EvalIDs)
			}
			if resp.NodeModifyIndex == 0 || resp.EvalCreateIndex != resp.NodeModifyIndex {
				t.Fatalf("status written at %d, evals at %d: want one entry", resp.NodeModifyIndex, resp.EvalCreateIndex)
			}
			ev, err := s.State().EvalByID(nil, resp.EvalIDs[0])
			if err != nil || ev == nil {
				t.Fatalf("eval %s: %v %v", resp.EvalIDs[0], ev, err)
			}
			if ev.JobID != "sys" || ev.NodeID != "n1" || ev.TriggeredBy != structs.EvalTriggerNodeUpdate || ev.CreateIndex != resp.NodeModifyIndex {
				t.Fatalf("eval %+v: want a node-update eval of job sys for n1 at index %d", ev, resp.NodeModifyIndex)
			}
			if ev.CreateTime == 0 || ev.CreateTime != ev.ModifyTime {
				t.Fatalf("eval times %d/%d: the leader stamps both", ev.CreateTime, ev.ModifyTime)
			}
		})
	}
}

// A server that crashes right after the entry that made a node ready
// restores, from a log that ends with that entry, a ready node together
// with its evals: there is no index at which the node is ready and its
// system work forgotten.
func TestLogEndingAtNodeReadyRestoresItsEvals(t *testing.T) {
	for _, tc := range readyNodeCases {
		t.Run(tc.name, func(t *testing.T) {
			s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
			WaitForLeader(t, 5*time.Second, s)
			registerJob(t, s, itSystemJob("sys"))
			resp := tc.ready(t, s, itNode("n1"))
			if err := s.Shutdown(); err != nil {
				t.Fatal(err)
			}

			f := replayRaftLog(t, filepath.Join(s.config.DataDir, "raft", "raft.db"), resp.NodeModifyIndex)
			n, err := f.State().NodeByID(nil, "n1")
			if err != nil || n == nil || n.Status != structs.NodeStatusReady {
				t.Fatalf("node after replay to %d: %+v %v, want ready", resp.NodeModifyIndex, n, err)
			}
			if len(resp.EvalIDs) == 0 {
				t.Fatal("the node became ready without evals")
			}
			for _, id := range resp.EvalIDs {
				e, err := f.State().EvalByID(nil, id)
				if err != nil || e == nil {
					t.Fatalf("log replayed to %d holds a ready node without its eval %s (%v)", resp.NodeModifyIndex, id, err)
				}
				if e.JobID != "sys" || e.NodeID != "n1" || e.Status != structs.EvalStatusPending {
					t.Fatalf("eval after replay: %+v", e)
				}
			}
		})
	}
}

// replayRaftLog applies the command entries of a raft-boltdb log up to and
// including index last to a fresh FSM: what a server restarting from a
// log that ends there would hold.
func replayRaftLog(t *testing.T, path string, last uint64) *fsm.FSM {
	t.Helper()
	store, err := raftboltdb.New(raftboltdb.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	first, err := store.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	f, err := fsm.New(hclog.NewNullLogger(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := first; i <= last; i++ {
		var l raft.Log
		if err := store.GetLog(i, &l); err != nil {
			t.Fatalf("raft log entry %d: %v", i, err)
		}
		if resp := f.Apply(&l); resp != nil {
			if err, ok := resp.(error); ok {
				t.Fatalf("replaying entry %d: %v", i, err)
			}
		}
	}
	return f
}

// The FSM refuses an entry that makes a node ready with evals read before
// a system job was registered, unless the entry has an eval for that job:
// the job's own eval may have run while the node was not ready. Entries
// without a read index (older servers, down and disconnected) are not
// checked.
func TestFSMRefusesReadyNodeEvalsReadBeforeASystemJob(t *testing.T) {
	sys := fsmTestJob("sys")
	sys.Type = structs.JobTypeSystem
	down := fsmTestNode("n1")
	down.Status = structs.NodeStatusDown
	setup := func(t *testing.T) *fsm.FSM {
		// The node down at 1, job web at 2, the system job at 3.
		l := &fsmLog{t: t}
		l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: down})
		l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: fsmTestJob("web")})
		l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: sys})
		f, err := fsm.New(hclog.NewNullLogger(), nil)
		if err != nil {
			t.Fatal(err)
		}
		l.applyTo(t, f)
		return f
	}
	sysEval := evalFor("e-sys", sys, structs.EvalStatusPending)
	ready := func(readIndex uint64, evals ...*structs.Evaluation) map[string]struct {
		mt  structs.MessageType
		msg any
	} {
		up := fsmTestNode("n1")
		return map[string]struct {
			mt  structs.MessageType
			msg any
		}{
			"heartbeat": {structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{NodeID: "n1", Status: structs.NodeStatusReady, UpdatedAt: 100, Evals: evals, EvalsReadIndex: readIndex}},
			"register":  {structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: up, Evals: evals, EvalsReadIndex: readIndex}},
		}
	}
	cases := []struct {
		name      string
		readIndex uint64
		evals     []*structs.Evaluation
		wantErr   bool
	}{
		{"evals read before the system job existed are refused", 2, nil, true},
		{"evals read after it are taken", 3, nil, false},
		{"evals read before it that include it are taken", 2, []*structs.Evaluation{sysEval}, false},
		{"an entry without a read index is not checked", 0, nil, false},
	}
	for _, tc := range cases {
		for kind, e := range ready(tc.readIndex, tc.evals...) {
			t.Run(kind+": "+tc.name, func(t *testing.T) {
				f := setup(t)
				before := dumpState(t, f.State())
				resp := f.Apply(entryAt(t, 10, e.mt, e.msg))
				err, _ := resp.(error)
				if tc.wantErr {
					if !errors.Is(err, fsm.ErrReadyNodeEvalsStale) || !strings.Contains(err.Error(), `job "sys"`) {
						t.Fatalf("want the entry refused naming job sys, got %v", resp)
					}
					if after := dumpState(t, f.State()); !structs.DeepEqual(before, after) {
						t.Fatal("the refused entry changed the state")
					}
					return
				}
				if err != nil {
					t.Fatalf("entry refused: %v", err)
				}
				if n, _ := f.State().NodeByID(nil, "n1"); n == nil || n.Status != structs.NodeStatusReady {
					t.Fatalf("node after the entry: %+v", n)
				}
			})
		}
	}
}

// A system job registered after the leader read the jobs for a node
// becoming ready, but before its entry committed, gets an eval for the
// node all the same: the FSM refuses the stale entry and the leader reads
// again, all in one call.
func TestNodeReadyRereadsTheJobsWhenASystemJobArrivesMeanwhile(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	WaitForLeader(t, 5*time.Second, s)
	registerJob(t, s, itSystemJob("early"))
	node := itNode("n1")
	node.Status = structs.NodeStatusInit
	registerNode(t, s, node)

	ep := &Node{srv: s}
	var reply structs.NodeUpdateResponse
	builds := 0
	err := ep.applyNodeStatus(node, nodeBecomesReady, s.Now(), &reply, func(evals []*structs.Evaluation, readIndex uint64) (structs.MessageType, any) {
		builds++
		if builds == 1 {
			registerJob(t, s, itSystemJob("late")) // between the read and the entry
		}
		return structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
			NodeID: node.ID, Status: structs.NodeStatusReady, UpdatedAt: 1, Evals: evals, EvalsReadIndex: readIndex}
	})
	if err != nil {
		t.Fatal(err)
	}
	if builds != 2 {
		t.Fatalf("entry built %d times, want 2 (refused once, then read again)", builds)
	}
	jobs := map[string]bool{}
	for _, id := range reply.EvalIDs {
		e, err := s.State().EvalByID(nil, id)
		if err != nil || e == nil {
			t.Fatalf("eval %s: %v", id, err)
		}
		if e.CreateIndex != reply.NodeModifyIndex {
			t.Fatalf("eval %s at %d, node ready at %d", id, e.CreateIndex, reply.NodeModifyIndex)
		}
		jobs[e.JobID] = true
	}
	if !jobs["early"] || !jobs["late"] || len(jobs) != 2 {
		t.Fatalf("evals for jobs %v, want early and late", jobs)
	}
}
