package nomad

import (
	"github.com/drover-sched/drover/structs"
)

// Native service registrations (issue 13). The entries carry the
// registrations as the leader checked them; the state store drops any
// whose alloc ended before the entry applied, so an apply needs nothing
// but the entry.

func (f *FSM) applyServiceRegistrationUpsert(buf []byte, index uint64) any {
	var req structs.ServiceRegistrationUpsertRequest
	decode(buf, &req, structs.ServiceRegistrationUpsertRequestType)
	if _, err := f.State().UpsertServiceRegistrations(index, req.Services); err != nil {
		f.logger.Error("service registration upsert failed", "error", err)
		return err
	}
	return nil
}

func (f *FSM) applyServiceRegistrationDelete(buf []byte, index uint64) any {
	var req structs.ServiceRegistrationDeleteRequest
	decode(buf, &req, structs.ServiceRegistrationDeleteRequestType)
	if err := f.State().DeleteServiceRegistrations(index, req.IDs); err != nil {
		f.logger.Error("service registration delete failed", "error", err)
		return err
	}
	return nil
}
