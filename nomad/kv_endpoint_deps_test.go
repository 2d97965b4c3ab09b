package nomad

import (
	"errors"
	"fmt"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// fakeKVServer is all of the server KV may use (kvServer), and no more: if
// KV starts to need something else of the server, this stops compiling and
// the new dependency shows in the diff. It records what KV asked for.
type fakeKVServer struct {
	forwardTo  func(reply any) // nil: answer here
	refuse     error           // allowManagement's answer
	applyIndex uint64

	forwarded []string
	checked   int
	applied   []structs.MessageType
	entries   []any
	queried   int
}

var _ kvServer = (*fakeKVServer)(nil)

func (f *fakeKVServer) forward(method string, info structs.RPCInfo, args, reply any) (bool, error) {
	if f.forwardTo == nil {
		return false, nil
	}
	f.forwarded = append(f.forwarded, method)
	f.forwardTo(reply)
	return true, nil
}

func (f *fakeKVServer) allowManagement(info structs.RPCInfo) error {
	f.checked++
	return f.refuse
}

func (f *fakeKVServer) raftApply(t structs.MessageType, msg any) (uint64, any, error) {
	f.applied = append(f.applied, t)
	f.entries = append(f.entries, msg)
	return f.applyIndex, nil, nil
}

func (f *fakeKVServer) blockingQuery(opts *structs.QueryOptions, meta *structs.QueryMeta, fn queryFn) error {
	f.queried++
	return errors.New("fakeKVServer: no state store")
}

// A token without management rights writes and reads nothing: the refusal
// comes back as it is and raft and the state store are never reached.
func TestKVRefusedTokenReachesNeitherRaftNorState(t *testing.T) {
	denied := fmt.Errorf("%w: KV needs a management token", structs.ErrPermissionDenied)
	f := &fakeKVServer{refuse: denied}
	kv := &KV{srv: f}

	err := kv.Write(&structs.GenericWriteRequest{Key: "k", Value: "v"}, &structs.GenericResponse{})
	if !errors.Is(err, structs.ErrPermissionDenied) {
		t.Fatalf("Write: got %v, want permission denied", err)
	}
	err = kv.Read(&structs.GenericReadRequest{Key: "k"}, &structs.GenericReadResponse{})
	if !errors.Is(err, structs.ErrPermissionDenied) {
		t.Fatalf("Read: got %v, want permission denied", err)
	}
	if f.checked != 2 || len(f.applied) != 0 || f.queried != 0 {
		t.Fatalf("checked %d times, applied %v, queried %d times; want 2 checks and nothing else", f.checked, f.applied, f.queried)
	}
}

// A request this server forwards is answered by the leader alone: the
// reply is the leader's, and nothing is checked or written here (the
// leader checks the token against its own state).
func TestKVForwardedWriteIsTheLeadersAnswer(t *testing.T) {
	f := &fakeKVServer{forwardTo: func(reply any) { reply.(*structs.GenericResponse).Index = 42 }}
	kv := &KV{srv: f}

	var reply structs.GenericResponse
	if err := kv.Write(&structs.GenericWriteRequest{Key: "k", Value: "v"}, &reply); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if reply.Index != 42 {
		t.Fatalf("reply index %d, want the leader's 42", reply.Index)
	}
	if len(f.forwarded) != 1 || f.forwarded[0] != "KV.Write" {
		t.Fatalf("forwarded %v, want [KV.Write]", f.forwarded)
	}
	if f.checked != 0 || len(f.applied) != 0 {
		t.Fatalf("checked %d times and applied %v here; want neither", f.checked, f.applied)
	}
}

// An allowed write on the leader is one GenericWrite entry carrying the
// request, and the reply has its index; an empty key never gets that far.
func TestKVAllowedWriteIsOneEntry(t *testing.T) {
	f := &fakeKVServer{applyIndex: 7}
	kv := &KV{srv: f}

	if err := kv.Write(&structs.GenericWriteRequest{Value: "v"}, &structs.GenericResponse{}); err == nil {
		t.Fatal("Write with an empty key: got no error")
	}
	if len(f.applied) != 0 {
		t.Fatalf("an empty key was applied: %v", f.applied)
	}

	args := &structs.GenericWriteRequest{Key: "k", Value: "v"}
	var reply structs.GenericResponse
	if err := kv.Write(args, &reply); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if len(f.applied) != 1 || f.applied[0] != structs.GenericWriteRequestType || f.entries[0] != any(args) {
		t.Fatalf("applied %v with %v, want one GenericWrite entry of the request", f.applied, f.entries)
	}
	if reply.Index != 7 {
		t.Fatalf("reply index %d, want the entry's 7", reply.Index)
	}
}
