package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

func aclPoliciesTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name:    TableACLPolicies,
		Indexes: map[string]*memdb.IndexSchema{"id": idIndex("Name")},
	}
}

// UpsertACLPolicies creates or replaces policies by name, in one
// transaction. CreateIndex is kept on update. The policies were validated
// (rules parsed) by the leader before the entry was written.
func (tx *Txn) UpsertACLPolicies(policies []*structs.ACLPolicy) error {
	txn, index := tx.txn, tx.index
	for _, policy := range policies {
		if policy == nil || policy.Name == "" {
			return fmt.Errorf("state: an ACL policy has no name")
		}
		p := policy.Copy()
		existing, err := aclPolicyByNameTxn(txn, nil, p.Name)
		if err != nil {
			return err
		}
		p.CreateIndex = index
		if existing != nil {
			p.CreateIndex = existing.CreateIndex
		}
		p.ModifyIndex = index
		if err := txn.Insert(TableACLPolicies, p); err != nil {
			return fmt.Errorf("state: inserting ACL policy %q: %w", p.Name, err)
		}
	}
	return setIndex(txn, TableACLPolicies, index)
}

// DeleteACLPolicies removes policies by name; names that do not exist are
// skipped. Tokens naming a deleted policy keep the name and simply get
// nothing from it, as in Nomad.
func (tx *Txn) DeleteACLPolicies(names []string) error {
	txn, index := tx.txn, tx.index
	for _, name := range names {
		p, err := aclPolicyByNameTxn(txn, nil, name)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		if err := txn.Delete(TableACLPolicies, p); err != nil {
			return fmt.Errorf("state: deleting ACL policy %q: %w", name, err)
		}
	}
	return setIndex(txn, TableACLPolicies, index)
}

// ACLPolicyByName returns a policy, or nil.
func (s *StateStore) ACLPolicyByName(ws memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	return aclPolicyByNameTxn(s.readTxn(), ws, name)
}

// ACLPoliciesByNames returns the named policies that exist, in the order
// named, read in one transaction (a token's policies, on every request).
func (s *StateStore) ACLPoliciesByNames(ws memdb.WatchSet, names []string) ([]*structs.ACLPolicy, error) {
	txn := s.readTxn()
	out := make([]*structs.ACLPolicy, 0, len(names))
	for _, name := range names {
		p, err := aclPolicyByNameTxn(txn, ws, name)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}

func aclPolicyByNameTxn(txn *memdb.Txn, ws memdb.WatchSet, name string) (*structs.ACLPolicy, error) {
	ch, raw, err := txn.FirstWatch(TableACLPolicies, "id", name)
	if err != nil {
		return nil, fmt.Errorf("state: ACL policy lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.ACLPolicy), nil
}

// ACLPolicies iterates over every policy in name order.
func (s *StateStore) ACLPolicies(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableACLPolicies, "id")
}

// ACLPoliciesByNamePrefix iterates over the policies whose name starts
// with prefix.
func (s *StateStore) ACLPoliciesByNamePrefix(ws memdb.WatchSet, prefix string) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableACLPolicies, "id_prefix", prefix)
}
