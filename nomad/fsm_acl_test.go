package nomad

import (
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad/raftlog"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// addACLEntries adds one entry of each ACL message type to the test log:
// two policies (one deleted again), the bootstrap token, and two client
// tokens (one deleted again).
func addACLEntries(l *fsmLog, ts time.Time) {
	rules := `namespace "default" { policy = "read" }`
	l.add(structs.ACLPolicyUpsertRequestType, &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{
		{Name: "readers", Rules: rules}, {Name: "writers", Rules: rules}}})
	l.add(structs.ACLPolicyDeleteRequestType, &structs.ACLPolicyDeleteRequest{Names: []string{"writers"}})
	l.add(structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapApplyRequest{Token: &structs.ACLToken{
		AccessorID: "boot", SecretHash: structs.HashACLSecret("boot-secret"), Name: "Bootstrap Token",
		Type: structs.ACLManagementToken, Global: true, CreateTime: ts}})
	client := func(id string) *structs.ACLToken {
		return &structs.ACLToken{AccessorID: id, SecretHash: structs.HashACLSecret(id + "-secret"), Name: id,
			Type: structs.ACLClientToken, Policies: []string{"readers"}, CreateTime: ts}
	}
	l.add(structs.ACLTokenUpsertRequestType, &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{client("t1"), client("t2")}})
	l.add(structs.ACLTokenDeleteRequestType, &structs.ACLTokenDeleteRequest{AccessorIDs: []string{"t2"}})
	// The server secret is set once: a second entry (a stale leader's)
	// changes nothing.
	l.add(structs.ServerSecretRequestType, &structs.ServerSecretRequest{Secret: "first-secret"})
	l.add(structs.ServerSecretRequestType, &structs.ServerSecretRequest{Secret: "second-secret"})
}

func checkACLEntries(t *testing.T, st *state.StateStore) {
	t.Helper()
	if p, _ := st.ACLPolicyByName(nil, "readers"); p == nil {
		t.Fatal("policy readers missing")
	}
	if p, _ := st.ACLPolicyByName(nil, "writers"); p != nil {
		t.Fatal("policy writers must be deleted")
	}
	if tok, _ := st.ACLTokenBySecretHash(nil, structs.HashACLSecret("t1-secret")); tok == nil || tok.AccessorID != "t1" {
		t.Fatalf("token t1 = %+v", tok)
	}
	if tok, _ := st.ACLTokenByAccessorID(nil, "t2"); tok != nil {
		t.Fatal("token t2 must be deleted")
	}
	if idx, _ := st.ACLBootstrapIndex(); idx == 0 {
		t.Fatal("the bootstrap is not recorded")
	}
	if sec, _ := st.ServerSecret(); sec != "first-secret" {
		t.Fatalf("server secret = %q; the first one stored must stay", sec)
	}
}

// No raft entry carries the caller's token: secrets live only as hashes.
func TestRaftEntriesNeverCarryTheCallersToken(t *testing.T) {
	req := &structs.JobRegisterRequest{Job: fsmTestJob("web"), WriteRequest: structs.WriteRequest{AuthToken: "caller-secret", ServerToken: "forwarder-secret", Region: "global"}}
	buf, err := raftlog.Encode(structs.JobRegisterRequestType, req)
	if err != nil {
		t.Fatal(err)
	}
	var back structs.JobRegisterRequest
	if err := rpcx.Decode(buf[1:], &back); err != nil {
		t.Fatal(err)
	}
	if back.AuthToken != "" || back.ServerToken != "" || back.Region != "global" {
		t.Fatalf("entry carries AuthToken %q, ServerToken %q (region %q)", back.AuthToken, back.ServerToken, back.Region)
	}
}

func TestFSMRefusesASecondBootstrapAndChangesNothing(t *testing.T) {
	l := &fsmLog{t: t}
	ts := time.Unix(1700000000, 0).UTC()
	boot := func(id string, reset uint64) {
		l.add(structs.ACLTokenBootstrapRequestType, &structs.ACLTokenBootstrapApplyRequest{ResetIndex: reset, Token: &structs.ACLToken{
			AccessorID: id, SecretHash: structs.HashACLSecret(id), Type: structs.ACLManagementToken, CreateTime: ts}})
	}
	boot("first", 0)
	boot("second", 0)
	boot("third", 1)
	f := testFSM(t)
	if resp := f.Apply(l.entries[0]); resp != nil {
		t.Fatalf("first bootstrap: %v", resp)
	}
	resp := f.Apply(l.entries[1])
	if err, ok := resp.(error); !ok || !errors.Is(err, structs.ErrACLBootstrapDone) {
		t.Fatalf("second bootstrap: %v", resp)
	}
	if tok, _ := f.State().ACLTokenByAccessorID(nil, "second"); tok != nil {
		t.Fatal("a refused bootstrap stored its token")
	}
	if resp := f.Apply(l.entries[2]); resp != nil {
		t.Fatalf("a bootstrap with the right reset index: %v", resp)
	}
}
