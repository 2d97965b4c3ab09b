package fsm

import (
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// Native service registrations (issue 13). The entries carry the
// registrations as the leader checked them; the state store drops any
// whose alloc ended before the entry applied, so an apply needs nothing
// but the entry.

func (f *FSM) applyServiceRegistrationUpsert(buf []byte, index uint64) any {
	var req structs.ServiceRegistrationUpsertRequest
	decode(buf, &req, structs.ServiceRegistrationUpsertRequestType)
	err := f.State().Write(index, func(tx *state.Txn) error {
		_, err := tx.UpsertServiceRegistrations(req.Services)
		return err
	})
	if err != nil {
		f.logger.Error("service registration upsert failed", "error", err)
		return err
	}
	return nil
}

func (f *FSM) applyServiceRegistrationDelete(buf []byte, index uint64) any {
	var req structs.ServiceRegistrationDeleteRequest
	decode(buf, &req, structs.ServiceRegistrationDeleteRequestType)
	if err := f.State().Write(index, func(tx *state.Txn) error { return tx.DeleteServiceRegistrations(req.IDs) }); err != nil {
		f.logger.Error("service registration delete failed", "error", err)
		return err
	}
	return nil
}
