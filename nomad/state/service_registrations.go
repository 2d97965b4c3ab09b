package state

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// TableServiceRegistrations holds the registrations of `provider =
// "nomad"` services. A registration lives only as long as its alloc: it is
// deleted in the same write that makes the alloc terminal (insertAlloc),
// marks its node down (Txn.UpdateNodeStatus), deletes the alloc (garbage
// collection) or deletes its job (a purge), and an upsert for an alloc that
// is gone or terminal is dropped, so a late client retry cannot bring one
// back.
const TableServiceRegistrations = "service_registrations"

func serviceRegistrationsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableServiceRegistrations,
		Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("ID"),
			// service_name is Namespace+ServiceName: the reads users and
			// templates make.
			"service_name": namespacedIndex("service_name", "ServiceName", false),
			"alloc_id": {
				Name:    "alloc_id",
				Indexer: &memdb.StringFieldIndex{Field: "AllocID"},
			},
			"node_id": {
				Name:         "node_id",
				AllowMissing: true,
				Indexer:      &memdb.StringFieldIndex{Field: "NodeID"},
			},
			"job": func() *memdb.IndexSchema {
				s := namespacedIndex("job", "JobID", false)
				s.AllowMissing = true
				return s
			}(),
		},
	}
}

// UpsertServiceRegistrations writes registrations a client sent. Each one's
// alloc must exist and not be terminal; one whose alloc is gone or
// terminal is skipped, not refused, because the alloc can end between the
// client's call and the entry's apply, and the entry must not resurrect a
// registration the alloc's end deleted. The alloc's node, job and
// namespace override what the registration says: the servers know where
// the alloc is. It returns how many were written.
func (tx *Txn) UpsertServiceRegistrations(regs []*structs.ServiceRegistration) (int, error) {
	txn, index := tx.txn, tx.index
	written := 0
	for _, r := range regs {
		if err := r.Validate(); err != nil {
			return 0, err
		}
		alloc, err := allocByIDTxn(txn, nil, r.AllocID)
		if err != nil {
			return 0, err
		}
		if alloc == nil || alloc.TerminalStatus() {
			continue
		}
		c := r.Copy()
		c.NodeID, c.JobID, c.Namespace = alloc.NodeID, alloc.JobID, alloc.Namespace
		existing, err := serviceRegistrationByIDTxn(txn, nil, c.ID)
		if err != nil {
			return 0, err
		}
		c.CreateIndex, c.ModifyIndex = index, index
		if existing != nil {
			if existing.AllocID != c.AllocID {
				return 0, fmt.Errorf("service registration %s belongs to alloc %s, not %s", c.ID, existing.AllocID, c.AllocID)
			}
			if existing.Equal(c) {
				continue
			}
			c.CreateIndex = existing.CreateIndex
		}
		if err := txn.Insert(TableServiceRegistrations, c); err != nil {
			return 0, fmt.Errorf("state: inserting service registration %s: %w", c.ID, err)
		}
		written++
	}
	if written == 0 {
		return 0, nil
	}
	if err := setIndex(txn, TableServiceRegistrations, index); err != nil {
		return 0, err
	}
	return written, nil
}

// DeleteServiceRegistrations deletes registrations by ID; IDs that are not
// there are skipped (a retried delete, or one that raced the alloc's end).
func (tx *Txn) DeleteServiceRegistrations(ids []string) error {
	txn, index := tx.txn, tx.index
	deleted := 0
	for _, id := range ids {
		n, err := deleteByID(txn, TableServiceRegistrations, id)
		if err != nil {
			return fmt.Errorf("state: deleting service registration %s: %w", id, err)
		}
		deleted += n
	}
	if deleted == 0 {
		return nil
	}
	return setIndex(txn, TableServiceRegistrations, index)
}

// deleteServiceRegistrationsTxn deletes every registration index names
// (alloc_id, node_id or job) with args, inside a larger write.
func deleteServiceRegistrationsTxn(txn *memdb.Txn, index uint64, by string, args ...any) error {
	n, err := txn.DeleteAll(TableServiceRegistrations, by, args...)
	if err != nil {
		return fmt.Errorf("state: deleting service registrations by %s: %w", by, err)
	}
	if n == 0 {
		return nil
	}
	return setIndex(txn, TableServiceRegistrations, index)
}

// ServiceRegistrationByID returns a registration, or nil.
func (s *StateStore) ServiceRegistrationByID(ws memdb.WatchSet, id string) (*structs.ServiceRegistration, error) {
	return serviceRegistrationByIDTxn(s.readTxn(), ws, id)
}

func serviceRegistrationByIDTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.ServiceRegistration, error) {
	ch, raw, err := txn.FirstWatch(TableServiceRegistrations, "id", id)
	if err != nil {
		return nil, fmt.Errorf("state: service registration lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.ServiceRegistration), nil
}

// ServiceRegistrationsByName returns the registrations of one service in a
// namespace, ordered by ID.
func (s *StateStore) ServiceRegistrationsByName(ws memdb.WatchSet, namespace, name string) ([]*structs.ServiceRegistration, error) {
	it, err := getWatch(s.readTxn(), ws, TableServiceRegistrations, "service_name", namespace, name)
	if err != nil {
		return nil, err
	}
	return collectServiceRegistrations(it), nil
}

// ServiceRegistrationsByAllocID returns an alloc's registrations.
func (s *StateStore) ServiceRegistrationsByAllocID(ws memdb.WatchSet, allocID string) ([]*structs.ServiceRegistration, error) {
	it, err := getWatch(s.readTxn(), ws, TableServiceRegistrations, "alloc_id", allocID)
	if err != nil {
		return nil, err
	}
	return collectServiceRegistrations(it), nil
}

// ServiceRegistrationsByNodeID returns a node's registrations.
func (s *StateStore) ServiceRegistrationsByNodeID(ws memdb.WatchSet, nodeID string) ([]*structs.ServiceRegistration, error) {
	it, err := getWatch(s.readTxn(), ws, TableServiceRegistrations, "node_id", nodeID)
	if err != nil {
		return nil, err
	}
	return collectServiceRegistrations(it), nil
}

// ServiceRegistrations iterates over every registration (snapshots and
// the list endpoint).
func (s *StateStore) ServiceRegistrations(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableServiceRegistrations, "id")
}

func collectServiceRegistrations(it memdb.ResultIterator) []*structs.ServiceRegistration {
	out := appendAll([]*structs.ServiceRegistration{}, it)
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ServiceRegistrationRestore adds a registration from a snapshot.
func (r *StateRestore) ServiceRegistrationRestore(reg *structs.ServiceRegistration) error {
	return r.insert(TableServiceRegistrations, reg)
}

// ServiceRegistrationsByNamespace returns a namespace's registrations in
// service name order.
func (s *StateStore) ServiceRegistrationsByNamespace(ws memdb.WatchSet, namespace string) ([]*structs.ServiceRegistration, error) {
	it, err := getWatch(s.readTxn(), ws, TableServiceRegistrations, "service_name_prefix", namespace, "")
	if err != nil {
		return nil, err
	}
	return appendAll([]*structs.ServiceRegistration{}, it), nil
}
