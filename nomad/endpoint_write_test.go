package nomad

import (
	"errors"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// oneApply is a raftApplier that answers one fixed index or error and
// records the entry it was given.
type oneApply struct {
	idx uint64
	err error
	t   structs.MessageType
	msg any
}

func (o *oneApply) raftApply(t structs.MessageType, msg any) (uint64, any, error) {
	o.t, o.msg = t, msg
	return o.idx, nil, o.err
}

func TestApplyIndexedSetsTheEntrysIndex(t *testing.T) {
	r := &oneApply{idx: 42}
	msg := &structs.EvalUpdateRequest{}
	index := uint64(7)
	if err := applyIndexed(r, structs.EvalUpdateRequestType, msg, &index); err != nil {
		t.Fatal(err)
	}
	if index != 42 || r.t != structs.EvalUpdateRequestType || r.msg != msg {
		t.Fatalf("index %d, applied %v %p; want 42, the given type and entry", index, r.t, r.msg)
	}
}

func TestApplyIndexedLeavesTheIndexOnError(t *testing.T) {
	boom := errors.New("boom")
	index := uint64(7)
	if err := applyIndexed(&oneApply{idx: 42, err: boom}, structs.EvalUpdateRequestType, nil, &index); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if index != 7 {
		t.Fatalf("index %d after a failed apply, want it untouched (7)", index)
	}
}
