package nomad

import (
	"errors"
	"slices"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// fakeServerOnly records the order serverOnly and nodeOnly ask their
// server in.
type fakeServerOnly struct {
	refuse    error
	elsewhere bool // forward answers that it forwarded
	calls     []string
}

func (f *fakeServerOnly) requireServer(method string, info structs.RPCInfo) error {
	f.calls = append(f.calls, "require "+method)
	return f.refuse
}

func (f *fakeServerOnly) forward(method string, info structs.RPCInfo, args, reply any) (bool, error) {
	f.calls = append(f.calls, "forward "+method)
	return f.elsewhere, nil
}

func TestServerOnly(t *testing.T) {
	args := &structs.EvalAckRequest{}
	denied := errors.New("servers only")

	f := &fakeServerOnly{refuse: denied, elsewhere: true}
	if done, err := serverOnly(f, "Eval.Ack", args, nil); !done || !errors.Is(err, denied) {
		t.Fatalf("refused: done %v, err %v; want done with the refusal", done, err)
	}
	if !slices.Equal(f.calls, []string{"require Eval.Ack"}) {
		t.Fatalf("refused request: calls %v; it must not be forwarded", f.calls)
	}

	f = &fakeServerOnly{elsewhere: true}
	if done, err := serverOnly(f, "Eval.Ack", args, nil); !done || err != nil {
		t.Fatalf("forwarded: done %v, err %v; want done", done, err)
	}
	if !slices.Equal(f.calls, []string{"require Eval.Ack", "forward Eval.Ack"}) {
		t.Fatalf("calls %v; want the peer check, then the forward", f.calls)
	}

	f = &fakeServerOnly{}
	if done, err := serverOnly(f, "Eval.Ack", args, nil); done || err != nil {
		t.Fatalf("answered here: done %v, err %v; want not done", done, err)
	}
}

func (f *fakeServerOnly) requireNodePeer(method string, info structs.RPCInfo) error {
	f.calls = append(f.calls, "node "+method)
	return f.refuse
}

func TestNodeOnly(t *testing.T) {
	args := &structs.NodeRegisterRequest{}
	denied := errors.New("nodes only")

	f := &fakeServerOnly{refuse: denied, elsewhere: true}
	if done, err := nodeOnly(f, "Node.Register", args, nil); !done || !errors.Is(err, denied) {
		t.Fatalf("refused: done %v, err %v; want done with the refusal", done, err)
	}
	if !slices.Equal(f.calls, []string{"node Node.Register"}) {
		t.Fatalf("refused request: calls %v; it must not be forwarded", f.calls)
	}

	f = &fakeServerOnly{elsewhere: true}
	if done, err := nodeOnly(f, "Node.Register", args, nil); !done || err != nil {
		t.Fatalf("forwarded: done %v, err %v; want done", done, err)
	}
	if !slices.Equal(f.calls, []string{"node Node.Register", "forward Node.Register"}) {
		t.Fatalf("calls %v; want the peer check, then the forward", f.calls)
	}

	f = &fakeServerOnly{}
	if done, err := nodeOnly(f, "Node.Register", args, nil); done || err != nil {
		t.Fatalf("answered here: done %v, err %v; want not done", done, err)
	}
}
