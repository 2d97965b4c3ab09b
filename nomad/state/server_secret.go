package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// SetServerSecretIfMissing stores the cluster's server secret unless one is
// stored already, and reports whether it stored it. The secret is set once
// for the life of the cluster: a second leader racing the first, or an
// entry replayed from an older term, cannot replace the secret the servers
// already use.
func (tx *Txn) SetServerSecretIfMissing(secret string) (bool, error) {
	if secret == "" {
		return false, fmt.Errorf("state: the server secret is empty")
	}
	txn, index := tx.txn, tx.index
	raw, err := txn.First(TableServerSecret, "id")
	if err != nil {
		return false, fmt.Errorf("state: server secret lookup: %w", err)
	}
	if raw != nil {
		return false, nil
	}
	if err := txn.Insert(TableServerSecret, &structs.ServerSecret{Secret: secret, CreateIndex: index, ModifyIndex: index}); err != nil {
		return false, fmt.Errorf("state: inserting the server secret: %w", err)
	}
	if err := setIndex(txn, TableServerSecret, index); err != nil {
		return false, err
	}
	return true, nil
}

// ServerSecret returns the cluster's server secret, "" before the leader
// made one. Only the servers' own authentication reads it.
func (s *StateStore) ServerSecret() (string, error) {
	return s.ServerSecretWatch(nil)
}

// ServerSecretWatch is ServerSecret that adds the secret's row to ws, so
// a server waiting for the secret to arrive wakes when it does.
func (s *StateStore) ServerSecretWatch(ws memdb.WatchSet) (string, error) {
	ch, raw, err := s.readTxn().FirstWatch(TableServerSecret, "id")
	if err != nil {
		return "", fmt.Errorf("state: server secret lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return "", nil
	}
	return raw.(*structs.ServerSecret).Secret, nil
}

// ServerSecrets iterates over the server secret table (one row at most),
// for snapshot persistence.
func (s *StateStore) ServerSecrets(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableServerSecret, "id")
}
