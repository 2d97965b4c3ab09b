package fsm

import (
	"github.com/drover-sched/drover/structs"

	"github.com/drover-sched/drover/nomad/state"
)

// The ACL entries. Each is one state transaction. Their tokens carry only
// the hash of a secret: the leader made the secret, hashed it and kept it
// out of the log (see acl_endpoint.go).

func (f *FSM) applyACLPolicyUpsert(buf []byte, index uint64) any {
	var req structs.ACLPolicyUpsertRequest
	decode(buf, &req, structs.ACLPolicyUpsertRequestType)
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.UpsertACLPolicies(req.Policies) }))
}

func (f *FSM) applyACLPolicyDelete(buf []byte, index uint64) any {
	var req structs.ACLPolicyDeleteRequest
	decode(buf, &req, structs.ACLPolicyDeleteRequestType)
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.DeleteACLPolicies(req.Names) }))
}

func (f *FSM) applyACLTokenUpsert(buf []byte, index uint64) any {
	var req structs.ACLTokenUpsertRequest
	decode(buf, &req, structs.ACLTokenUpsertRequestType)
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.UpsertACLTokens(req.Tokens) }))
}

func (f *FSM) applyACLTokenDelete(buf []byte, index uint64) any {
	var req structs.ACLTokenDeleteRequest
	decode(buf, &req, structs.ACLTokenDeleteRequestType)
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.DeleteACLTokens(req.AccessorIDs) }))
}

func (f *FSM) applyACLTokenBootstrap(buf []byte, index uint64) any {
	var req structs.ACLTokenBootstrapApplyRequest
	decode(buf, &req, structs.ACLTokenBootstrapRequestType)
	return errOrNil(f.State().Write(index, func(tx *state.Txn) error { return tx.BootstrapACLToken(req.ResetIndex, req.Token) }))
}

// applyServerSecret stores the server secret the leader made, unless the
// cluster has one; the answer says whether this entry's secret was kept.
func (f *FSM) applyServerSecret(buf []byte, index uint64) any {
	var req structs.ServerSecretRequest
	decode(buf, &req, structs.ServerSecretRequestType)
	var stored bool
	err := f.State().Write(index, func(tx *state.Txn) (err error) {
		stored, err = tx.SetServerSecretIfMissing(req.Secret)
		return err
	})
	if err != nil {
		return err
	}
	return stored
}
