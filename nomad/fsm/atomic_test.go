package fsm

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// notifyCounter counts what the FSM told the leader's components.
type notifyCounter struct {
	NoHooks
	evals, stopped int
}

func (h *notifyCounter) EvalsUpserted(evals []*structs.Evaluation) { h.evals += len(evals) }
func (h *notifyCounter) JobStopped(string, string)                 { h.stopped++ }

// hookedFSM is an FSM whose store calls afterCommit after every commit.
func hookedFSM(t *testing.T, hooks Hooks, afterCommit func()) *FSM {
	t.Helper()
	f, err := New(hclog.NewNullLogger(), hooks)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.NewStateStore(&state.StateStoreConfig{AfterCommit: afterCommit})
	if err != nil {
		t.Fatal(err)
	}
	f.state = st
	return f
}

// atomicSetupLog writes node n1 with job web's alloc a1 running on it, at
// indexes 1 to 4.
func atomicSetupLog(t *testing.T) (*fsmLog, *structs.Job) {
	l := &fsmLog{t: t}
	job := fsmTestJob("web")
	l.add(structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: fsmTestNode("n1")})
	l.add(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: evalFor("e1", job, structs.EvalStatusComplete)})
	l.add(structs.ApplyPlanResultsRequestType, &structs.ApplyPlanResultsRequest{AllocsUpdated: []*structs.Allocation{fsmTestAlloc("a1", "n1", job, "e1")}, Job: job, UpdatedAt: 1})
	l.add(structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{Alloc: []*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusRunning}}, UpdatedAt: 2})
	return l, job
}

// entryAt encodes one entry at a raft index.
func entryAt(t *testing.T, index uint64, mt structs.MessageType, msg any) *raft.Log {
	t.Helper()
	buf, err := raftlog.Encode(mt, msg)
	if err != nil {
		t.Fatal(err)
	}
	return &raft.Log{Index: index, Type: raft.LogCommand, Data: buf}
}

// twoPartEntries are the entries that change something and write evals
// with it. evals go into each entry as its evals.
func twoPartEntries(evals []*structs.Evaluation) map[string]struct {
	mt  structs.MessageType
	msg any
} {
	type entry = struct {
		mt  structs.MessageType
		msg any
	}
	return map[string]entry{
		"node status": {structs.NodeUpdateStatusRequestType, &structs.NodeUpdateStatusRequest{
			NodeID: "n1", Status: structs.NodeStatusDown, UpdatedAt: 100,
			NodeEvent: &structs.NodeEvent{Message: "Node heartbeat missed", Timestamp: time.Unix(100, 0)}, Evals: evals}},
		"client alloc update": {structs.AllocClientUpdateRequestType, &structs.AllocUpdateRequest{
			Alloc: []*structs.Allocation{{ID: "a1", ClientStatus: structs.AllocClientStatusFailed}}, Evals: evals, UpdatedAt: 100}},
		"node eligibility": {structs.NodeUpdateEligibilityRequestType, &structs.NodeUpdateEligibilityRequest{
			NodeID: "n1", Eligibility: structs.NodeSchedulingIneligible, UpdatedAt: 100, Evals: evals}},
		"node register": {structs.NodeRegisterRequestType, &structs.NodeRegisterRequest{Node: renamedTestNode(), Evals: evals}},
	}
}

// renamedTestNode is node n1 re-registering under another name.
func renamedTestNode() *structs.Node {
	n := fsmTestNode("n1")
	n.Name = "n1-renamed"
	return n
}

// An entry whose evals fail (here: one has no ID) after its first change
// succeeded leaves the store exactly as it was, at the old index, with
// nothing committed and nothing handed to the broker or the dispatcher.
func TestFSMEntryThatFailsPartWayChangesNothing(t *testing.T) {
	_, job := atomicSetupLog(t)
	bad := []*structs.Evaluation{evalFor("e-ok", job, structs.EvalStatusPending), evalFor("", job, structs.EvalStatusPending)}
	entries := twoPartEntries(bad)
	entries["job deregister"] = struct {
		mt  structs.MessageType
		msg any
	}{structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{
		JobID: "web", Eval: evalFor("", job, structs.EvalStatusPending), SubmitTime: 100,
		WriteRequest: structs.WriteRequest{Namespace: "default"}}}

	for name, e := range entries {
		t.Run(name, func(t *testing.T) {
			hooks := &notifyCounter{}
			var commits atomic.Int64
			f := hookedFSM(t, hooks, func() { commits.Add(1) })
			l, _ := atomicSetupLog(t)
			l.applyTo(t, f)
			st := f.State()
			before, committed := dumpState(t, st), commits.Load()
			evalsBefore, stoppedBefore := hooks.evals, hooks.stopped

			resp := f.Apply(entryAt(t, 100, e.mt, e.msg))
			if err, ok := resp.(error); !ok || err == nil {
				t.Fatalf("an entry with an eval without an ID must fail, got %v", resp)
			}
			if n := commits.Load() - committed; n != 0 {
				t.Fatalf("the failed entry committed %d transactions", n)
			}
			if after := dumpState(t, st); !structs.DeepEqual(before, after) {
				t.Fatal("the failed entry changed the state store")
			}
			if idx, _ := st.LatestIndex(); idx != 4 {
				t.Fatalf("latest index %d after the failed entry, want 4", idx)
			}
			if evals, stopped := hooks.evals, hooks.stopped; evals != evalsBefore || stopped != stoppedBefore {
				t.Fatalf("the failed entry notified %d evals and %d stopped jobs", evals-evalsBefore, stopped-stoppedBefore)
			}
		})
	}
}

// A blocking query on the first thing an entry changes (the node, or the
// alloc) is woken by the entry's commit and must see the entry's evals in
// the same answer. The store's AfterCommit hook holds the FSM after the
// first commit until the query has answered, so an entry written in two
// transactions would be caught between them every time, not by luck.
func TestFSMBlockingQuerySeesAnEntryWhole(t *testing.T) {
	type watched struct {
		table string
		read  func(ws memdb.WatchSet, s *state.StateStore) (changed bool)
	}
	watches := map[string]watched{
		"node status": {state.TableNodes, func(ws memdb.WatchSet, s *state.StateStore) bool {
			n, _ := s.NodeByID(ws, "n1")
			return n != nil && n.Status == structs.NodeStatusDown
		}},
		"node eligibility": {state.TableNodes, func(ws memdb.WatchSet, s *state.StateStore) bool {
			n, _ := s.NodeByID(ws, "n1")
			return n != nil && n.SchedulingEligibility == structs.NodeSchedulingIneligible
		}},
		"node register": {state.TableNodes, func(ws memdb.WatchSet, s *state.StateStore) bool {
			n, _ := s.NodeByID(ws, "n1")
			return n != nil && n.Name == "n1-renamed"
		}},
		"client alloc update": {state.TableAllocs, func(ws memdb.WatchSet, s *state.StateStore) bool {
			a, _ := s.AllocByID(ws, "a1")
			return a != nil && a.ClientStatus == structs.AllocClientStatusFailed
		}},
	}
	_, job := atomicSetupLog(t)
	entries := twoPartEntries([]*structs.Evaluation{evalFor("e-new", job, structs.EvalStatusPending)})

	for name, e := range entries {
		w := watches[name]
		t.Run(name, func(t *testing.T) {
			var armed atomic.Bool
			answered := make(chan struct{})
			f := hookedFSM(t, nil, func() {
				if armed.CompareAndSwap(true, false) {
					// Hold the writer until the query has answered; the
					// deadline only keeps a broken test from hanging.
					select {
					case <-answered:
					case <-time.After(30 * time.Second):
					}
				}
			})
			l, _ := atomicSetupLog(t)
			l.applyTo(t, f)
			st := f.State()
			minIndex, _ := st.Index(w.table)

			type answer struct{ changed, hasEval bool }
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			firstRun := make(chan struct{})
			result := make(chan answer, 1)
			go func() {
				defer close(answered)
				var once sync.Once
				resp, _, err := st.BlockingQuery(ctx, minIndex, func(ws memdb.WatchSet, s *state.StateStore) (any, uint64, error) {
					defer once.Do(func() { close(firstRun) })
					a := answer{changed: w.read(ws, s)}
					ev, err := s.EvalByID(nil, "e-new")
					a.hasEval = ev != nil
					idx, _ := s.Index(w.table)
					return a, idx, err
				})
				if err != nil {
					t.Errorf("blocking query: %v", err)
				}
				result <- resp.(answer)
			}()
			select {
			case <-firstRun:
			case <-ctx.Done():
				t.Fatal("the blocking query never ran")
			}

			armed.Store(true)
			applied := make(chan any, 1)
			go func() { applied <- f.Apply(entryAt(t, 100, e.mt, e.msg)) }()
			var got answer
			select {
			case got = <-result:
			case <-ctx.Done():
				t.Fatal("the blocking query was not woken by the entry")
			}
			select {
			case resp := <-applied:
				if resp != nil {
					t.Fatalf("entry failed: %v", resp)
				}
			case <-ctx.Done():
				t.Fatal("the entry never finished applying")
			}
			if !got.changed {
				t.Fatal("the woken query did not see the entry's change")
			}
			if !got.hasEval {
				t.Fatal("the woken query saw the entry's change without its eval: the entry was applied in two transactions")
			}
		})
	}
}
