package nomad

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/nomad/fsm"
	"github.com/drover-sched/drover/structs"
)

// fsmDispatchParent is a parameterized batch parent for FSM tests.
func fsmDispatchParent() *structs.Job {
	p := fsmTestJob("encode")
	p.Type = structs.JobTypeBatch
	p.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: structs.DispatchPayloadOptional}
	return p
}

func dispatchEntry(t *testing.T, index uint64, parent *structs.Job, token, suffix, evalID string) (*structs.Job, *raft.Log) {
	t.Helper()
	child := deriveDispatchedChild(parent, &structs.JobDispatchRequest{IdempotencyToken: token}, time.Unix(1700000000, 0), suffix)
	return child, entryAt(t, index, structs.JobDispatchRequestType, &structs.JobDispatchApplyRequest{Job: child, Eval: evalFor(evalID, child, structs.EvalStatusPending)})
}

// mustApply applies an entry that must succeed.
func mustApply(t *testing.T, f *fsm.FSM, e *raft.Log) {
	t.Helper()
	if resp := f.Apply(e); resp != nil {
		t.Fatalf("entry %d (%s) answered %v", e.Index, structs.MessageType(e.Data[0]), resp)
	}
}

func TestFSMDispatchStoresTheChildAndItsEvalInOneEntry(t *testing.T) {
	f := testFSM(t)
	parent := fsmDispatchParent()
	if resp := f.Apply(entryAt(t, 1, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: parent})); resp != nil {
		t.Fatalf("register parent: %v", resp)
	}
	child, entry := dispatchEntry(t, 2, parent, "", "0a1b2c3d", "e1")
	if resp := f.Apply(entry); resp != nil {
		t.Fatalf("dispatch: %v", resp)
	}
	st := f.State()
	stored, _ := st.JobByID(nil, "default", child.ID)
	eval, _ := st.EvalByID(nil, "e1")
	if stored == nil || stored.CreateIndex != 2 || eval == nil || eval.CreateIndex != 2 || eval.JobID != child.ID {
		t.Fatalf("child %+v and eval %+v must both be stored at index 2", stored, eval)
	}
	sum, _ := st.JobSummaryByID(nil, "default", "encode")
	if sum == nil || sum.Children == nil || sum.Children.Pending != 1 {
		t.Fatalf("parent's children summary %+v, want one pending child", sum)
	}
}

func TestFSMDispatchWithATokenALiveChildHoldsStoresNothing(t *testing.T) {
	f := testFSM(t)
	parent := fsmDispatchParent()
	mustApply(t, f, entryAt(t, 1, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: parent}))
	first, entry := dispatchEntry(t, 2, parent, "tok", "00000001", "e1")
	if resp := f.Apply(entry); resp != nil {
		t.Fatalf("first dispatch: %v", resp)
	}
	before := dumpState(t, f.State())

	// A second entry with the same token: the leader checked before the
	// first was applied (a race), so the FSM is the one that must refuse.
	_, entry = dispatchEntry(t, 3, parent, "tok", "00000002", "e2")
	resp := f.Apply(entry)
	dup, ok := resp.(*fsm.DispatchDuplicate)
	if !ok || dup.Child.ID != first.ID {
		t.Fatalf("second dispatch answered %#v, want the first child %s", resp, first.ID)
	}
	if after := dumpState(t, f.State()); !structs.DeepEqual(before, after) {
		t.Fatal("a dispatch answered by an earlier child changed the state")
	}

	// Another token dispatches anew.
	_, entry = dispatchEntry(t, 4, parent, "other", "00000003", "e3")
	if resp := f.Apply(entry); resp != nil {
		t.Fatalf("dispatch with another token: %v", resp)
	}
}

func TestFSMDispatchRefusesWhatNoLongerHolds(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, f *fsm.FSM, parent *structs.Job)
		want  string
	}{
		{"the parent was purged", func(t *testing.T, f *fsm.FSM, parent *structs.Job) {
			mustApply(t, f, entryAt(t, 2, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: "encode", Purge: true, WriteRequest: structs.WriteRequest{Namespace: "default"}}))
		}, "not found"},
		{"the parent was stopped", func(t *testing.T, f *fsm.FSM, parent *structs.Job) {
			mustApply(t, f, entryAt(t, 2, structs.JobDeregisterRequestType, &structs.JobDeregisterRequest{JobID: "encode", WriteRequest: structs.WriteRequest{Namespace: "default"}}))
		}, `job "encode" is stopped`},
		{"the parent is no longer parameterized", func(t *testing.T, f *fsm.FSM, parent *structs.Job) {
			p := parent.Copy()
			p.ParameterizedJob = nil
			mustApply(t, f, entryAt(t, 2, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: p}))
		}, `job "encode" is not parameterized`},
		{"the child's ID is taken", func(t *testing.T, f *fsm.FSM, parent *structs.Job) {
			_, entry := dispatchEntry(t, 2, parent, "", "0a1b2c3d", "e0")
			mustApply(t, f, entry)
		}, "already exists"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := testFSM(t)
			parent := fsmDispatchParent()
			mustApply(t, f, entryAt(t, 1, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: parent}))
			tc.setup(t, f, parent)
			before := dumpState(t, f.State())
			_, entry := dispatchEntry(t, 3, parent, "", "0a1b2c3d", "e1")
			err, _ := f.Apply(entry).(error)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("dispatch answered %v, want an error containing %q", err, tc.want)
			}
			if after := dumpState(t, f.State()); !structs.DeepEqual(before, after) {
				t.Fatal("a refused dispatch entry changed the state")
			}
		})
	}
}

func TestFSMDispatchEntryWithoutAnEvalIsRefused(t *testing.T) {
	f := testFSM(t)
	parent := fsmDispatchParent()
	mustApply(t, f, entryAt(t, 1, structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: parent}))
	child := deriveDispatchedChild(parent, &structs.JobDispatchRequest{}, time.Unix(1700000000, 0), "0a1b2c3d")
	err, _ := f.Apply(entryAt(t, 2, structs.JobDispatchRequestType, &structs.JobDispatchApplyRequest{Job: child})).(error)
	if !errors.Is(err, ErrBadRequest) {
		t.Fatalf("got %v, want a bad request", err)
	}
}
