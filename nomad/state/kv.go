package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
)

// KVSet writes a key of the generic key/value table. It exists so cluster
// tests can check replication without depending on jobs or nodes.
func (tx *Txn) KVSet(key, value string) error {
	if key == "" {
		return fmt.Errorf("state: kv key is empty")
	}
	txn, index := tx.txn, tx.index
	raw, err := txn.First(TableKV, "id", key)
	if err != nil {
		return fmt.Errorf("state: kv lookup: %w", err)
	}
	e := &KVEntry{Key: key, Value: value, CreateIndex: index, ModifyIndex: index}
	if raw != nil {
		e.CreateIndex = raw.(*KVEntry).CreateIndex
	}
	if err := txn.Insert(TableKV, e); err != nil {
		return fmt.Errorf("state: inserting kv %q: %w", key, err)
	}
	return setIndex(txn, TableKV, index)
}

// KVGet reads a key; found is false if it was never set.
func (s *StateStore) KVGet(ws memdb.WatchSet, key string) (value string, found bool, err error) {
	ch, raw, err := s.readTxn().FirstWatch(TableKV, "id", key)
	if err != nil {
		return "", false, fmt.Errorf("state: kv lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return "", false, nil
	}
	return raw.(*KVEntry).Value, true, nil
}

// KVs iterates over every key (for snapshot persistence).
func (s *StateStore) KVs(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableKV, "id")
}
