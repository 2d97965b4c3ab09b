package state

import (
	"fmt"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// IndexACLBootstrap is the key of the `index` table row that records the
// raft index at which the ACL system was bootstrapped (absent: never). It
// is the "reset index" an operator writes to allow bootstrapping again.
const IndexACLBootstrap = "acl_token_bootstrap"

func aclTokensTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableACLTokens,
		Indexes: map[string]*memdb.IndexSchema{
			"id": idIndex("AccessorID"),
			// secret finds a token by the hash of the secret a request
			// carries. memdb does not enforce uniqueness here; the write
			// methods do.
			"secret": {
				Name:    "secret",
				Unique:  true,
				Indexer: &memdb.StringFieldIndex{Field: "SecretHash"},
			},
		},
	}
}

// UpsertACLTokens creates or updates tokens in one transaction. What is
// stored never holds a secret: SecretID is cleared, and each token must
// carry its SecretHash, unique among tokens. An update keeps the token's
// CreateIndex and must keep its secret.
func (tx *Txn) UpsertACLTokens(tokens []*structs.ACLToken) error {
	txn, index := tx.txn, tx.index
	for _, t := range tokens {
		if err := upsertACLTokenTxn(txn, index, t); err != nil {
			return err
		}
	}
	return setIndex(txn, TableACLTokens, index)
}

func upsertACLTokenTxn(txn *memdb.Txn, index uint64, token *structs.ACLToken) error {
	if token == nil || token.AccessorID == "" {
		return fmt.Errorf("state: an ACL token has no accessor ID")
	}
	if token.SecretHash == "" {
		return fmt.Errorf("state: ACL token %s has no secret hash", token.AccessorID)
	}
	t := token.Copy()
	t.SecretID = ""
	t.ExpirationTTL = 0
	existing, err := aclTokenByAccessorTxn(txn, nil, t.AccessorID)
	if err != nil {
		return err
	}
	holder, err := aclTokenBySecretHashTxn(txn, nil, t.SecretHash)
	if err != nil {
		return err
	}
	if holder != nil && holder.AccessorID != t.AccessorID {
		return fmt.Errorf("state: ACL token %s: its secret is already the secret of another token", t.AccessorID)
	}
	t.CreateIndex = index
	if existing != nil {
		if existing.SecretHash != t.SecretHash {
			return fmt.Errorf("state: ACL token %s: a token's secret cannot change", t.AccessorID)
		}
		t.CreateIndex = existing.CreateIndex
	}
	t.ModifyIndex = index
	if err := txn.Insert(TableACLTokens, t); err != nil {
		return fmt.Errorf("state: inserting ACL token %s: %w", t.AccessorID, err)
	}
	return nil
}

// DeleteACLTokens removes tokens by accessor ID; unknown ones are skipped.
func (tx *Txn) DeleteACLTokens(accessorIDs []string) error {
	txn, index := tx.txn, tx.index
	for _, id := range accessorIDs {
		t, err := aclTokenByAccessorTxn(txn, nil, id)
		if err != nil {
			return err
		}
		if t == nil {
			continue
		}
		if err := txn.Delete(TableACLTokens, t); err != nil {
			return fmt.Errorf("state: deleting ACL token %s: %w", id, err)
		}
	}
	return setIndex(txn, TableACLTokens, index)
}

// BootstrapACLToken stores the bootstrap management token and records the
// bootstrap at index, in one transaction. It refuses if the cluster was
// bootstrapped before, unless resetIndex is that bootstrap's index (the
// operator's reset, checked by the leader against the reset file). Two
// bootstraps racing through raft therefore cannot both win.
func (tx *Txn) BootstrapACLToken(resetIndex uint64, token *structs.ACLToken) error {
	txn, index := tx.txn, tx.index
	done, err := indexTxn(txn, IndexACLBootstrap)
	if err != nil {
		return err
	}
	if done != 0 && done != resetIndex {
		return fmt.Errorf("%w (reset index: %d)", structs.ErrACLBootstrapDone, done)
	}
	if err := upsertACLTokenTxn(txn, index, token); err != nil {
		return err
	}
	return setIndexes(txn, index, TableACLTokens, IndexACLBootstrap)
}

// ACLBootstrapIndex returns the raft index of the ACL bootstrap, 0 if the
// cluster was never bootstrapped.
func (s *StateStore) ACLBootstrapIndex() (uint64, error) {
	return indexTxn(s.readTxn(), IndexACLBootstrap)
}

// ACLTokenByAccessorID returns a token, or nil.
func (s *StateStore) ACLTokenByAccessorID(ws memdb.WatchSet, id string) (*structs.ACLToken, error) {
	return aclTokenByAccessorTxn(s.readTxn(), ws, id)
}

// ACLTokenBySecretHash returns the token whose secret hashes to hash
// (structs.HashACLSecret), or nil.
func (s *StateStore) ACLTokenBySecretHash(ws memdb.WatchSet, hash string) (*structs.ACLToken, error) {
	return aclTokenBySecretHashTxn(s.readTxn(), ws, hash)
}

func aclTokenByAccessorTxn(txn *memdb.Txn, ws memdb.WatchSet, id string) (*structs.ACLToken, error) {
	ch, raw, err := txn.FirstWatch(TableACLTokens, "id", id)
	if err != nil {
		return nil, fmt.Errorf("state: ACL token lookup: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.ACLToken), nil
}

func aclTokenBySecretHashTxn(txn *memdb.Txn, ws memdb.WatchSet, hash string) (*structs.ACLToken, error) {
	if hash == "" {
		return nil, nil
	}
	ch, raw, err := txn.FirstWatch(TableACLTokens, "secret", hash)
	if err != nil {
		return nil, fmt.Errorf("state: ACL token lookup by secret: %w", err)
	}
	ws.Add(ch)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.ACLToken), nil
}

// ACLTokens iterates over every token in accessor ID order.
func (s *StateStore) ACLTokens(ws memdb.WatchSet) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableACLTokens, "id")
}

// ACLTokensByAccessorPrefix iterates over the tokens whose accessor ID
// starts with prefix.
func (s *StateStore) ACLTokensByAccessorPrefix(ws memdb.WatchSet, prefix string) (memdb.ResultIterator, error) {
	return getWatch(s.readTxn(), ws, TableACLTokens, "id_prefix", prefix)
}
