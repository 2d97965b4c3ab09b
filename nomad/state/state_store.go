package state

import (
	"context"
	"errors"
	"fmt"
	"sync"

	hclog "github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
)

// ErrAbandoned is returned by waits on a store that a snapshot restore has
// replaced. The caller should fetch the current store and try again.
var ErrAbandoned = errors.New("state store abandoned by a snapshot restore")

// StateStoreConfig configures a StateStore.
type StateStoreConfig struct {
	// Logger receives warnings about inconsistencies the store tolerates
	// (an alloc whose job is gone, ...). Nil means discard.
	Logger hclog.Logger

	// AfterCommit, if set, runs after every write transaction commits, on
	// the writing goroutine and before the write method returns, so the
	// next write cannot begin until it returns. Readers woken by the commit
	// can already see it. Tests use it to look at every committed state in
	// turn, which is how they show that no reader can see half of a raft
	// entry.
	AfterCommit func()

	// OnChanges, if set, is given the changes of every write transaction
	// once it has committed, on the writing goroutine (the FSM's), in
	// commit order. The FSM turns them into the event stream. The objects
	// in the changes are the stored ones: read them, never change them.
	// It must be quick: the next write waits for it.
	OnChanges func(memdb.Changes)
}

// StateStore is the in-memory database of everything the servers agree
// on. The FSM is the only writer; anyone may read.
type StateStore struct {
	logger hclog.Logger
	db     *memdb.MemDB

	// afterCommit is StateStoreConfig.AfterCommit; nil on snapshots.
	afterCommit func()
	// onChanges is StateStoreConfig.OnChanges; nil on snapshots.
	onChanges func(memdb.Changes)

	// abandon is shared by a store and all its snapshots, so that waiting on
	// a snapshot also ends when the store it came from is replaced.
	abandon *abandonSignal
}

type abandonSignal struct {
	once sync.Once
	ch   chan struct{}
}

// StateSnapshot is a point-in-time, read-only view of the store. It embeds
// StateStore so every read method works on it. Writes to a snapshot are
// possible (tests use them to build what-if states) but never reach the
// store it was taken from.
type StateSnapshot struct {
	StateStore
}

// NewStateStore returns an empty store.
func NewStateStore(cfg *StateStoreConfig) (*StateStore, error) {
	logger := hclog.NewNullLogger()
	var afterCommit func()
	var onChanges func(memdb.Changes)
	if cfg != nil {
		onChanges = cfg.OnChanges
		if cfg.Logger != nil {
			logger = cfg.Logger.Named("state")
		}
		afterCommit = cfg.AfterCommit
	}
	db, err := memdb.NewMemDB(stateSchema())
	if err != nil {
		return nil, fmt.Errorf("state: creating memdb: %w", err)
	}
	return &StateStore{
		logger:      logger,
		db:          db,
		afterCommit: afterCommit,
		onChanges:   onChanges,
		abandon:     &abandonSignal{ch: make(chan struct{})},
	}, nil
}

// Snapshot returns a consistent view of the store as of now. It is cheap:
// memdb is an immutable radix tree and the snapshot shares it.
func (s *StateStore) Snapshot() (*StateSnapshot, error) {
	return &StateSnapshot{StateStore: StateStore{
		logger:  s.logger,
		db:      s.db.Snapshot(),
		abandon: s.abandon,
	}}, nil
}

// SnapshotMinIndex waits until the store has applied index, then returns a
// snapshot. A worker uses it so that the scheduler never plans on a state
// older than the eval it processes. It waits on the index table's watch
// channel, so it wakes on the first write that could satisfy it.
func (s *StateStore) SnapshotMinIndex(ctx context.Context, index uint64) (*StateSnapshot, error) {
	for {
		ws := memdb.NewWatchSet()
		ws.Add(s.AbandonCh())
		txn := s.db.Txn(false)
		iter, err := txn.Get(TableIndex, "id")
		if err != nil {
			return nil, fmt.Errorf("state: reading indexes: %w", err)
		}
		ws.Add(iter.WatchCh())
		latest := maxIndex(iter)
		if latest >= index {
			return s.Snapshot()
		}
		if s.abandoned() {
			return nil, ErrAbandoned
		}
		if err := ws.WatchCtx(ctx); err != nil {
			return nil, fmt.Errorf("state: waiting for index %d (at %d): %w", index, latest, err)
		}
	}
}

// LatestIndex returns the newest raft index applied to any table.
func (s *StateStore) LatestIndex() (uint64, error) {
	iter, err := s.db.Txn(false).Get(TableIndex, "id")
	if err != nil {
		return 0, fmt.Errorf("state: reading indexes: %w", err)
	}
	return maxIndex(iter), nil
}

// Index returns the raft index of the latest write to table, 0 if none.
func (s *StateStore) Index(table string) (uint64, error) {
	return indexTxn(s.db.Txn(false), table)
}

// Indexes iterates over the `index` table (for snapshot persistence).
func (s *StateStore) Indexes() (memdb.ResultIterator, error) {
	return s.db.Txn(false).Get(TableIndex, "id")
}

// AbandonCh is closed when a snapshot restore replaces this store.
func (s *StateStore) AbandonCh() <-chan struct{} { return s.abandon.ch }

// Abandon marks the store as replaced and wakes everyone waiting on it.
// It is safe to call more than once.
func (s *StateStore) Abandon() {
	s.abandon.once.Do(func() { close(s.abandon.ch) })
}

func (s *StateStore) abandoned() bool {
	select {
	case <-s.abandon.ch:
		return true
	default:
		return false
	}
}

func maxIndex(iter memdb.ResultIterator) uint64 {
	var latest uint64
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if v := raw.(*IndexEntry).Value; v > latest {
			latest = v
		}
	}
	return latest
}

func indexTxn(txn *memdb.Txn, table string) (uint64, error) {
	raw, err := txn.First(TableIndex, "id", table)
	if err != nil {
		return 0, fmt.Errorf("state: reading index of %s: %w", table, err)
	}
	if raw == nil {
		return 0, nil
	}
	return raw.(*IndexEntry).Value, nil
}

// setIndex records that table was written at index. Indexes only move
// forward, so a blocking query's index never goes back.
func setIndex(txn *memdb.Txn, table string, index uint64) error {
	cur, err := indexTxn(txn, table)
	if err != nil {
		return err
	}
	if index <= cur {
		return nil
	}
	if err := txn.Insert(TableIndex, &IndexEntry{Key: table, Value: index}); err != nil {
		return fmt.Errorf("state: updating index of %s: %w", table, err)
	}
	return nil
}

// setIndexes is setIndex for several tables.
func setIndexes(txn *memdb.Txn, index uint64, tables ...string) error {
	for _, t := range tables {
		if err := setIndex(txn, t, index); err != nil {
			return err
		}
	}
	return nil
}

// writeMemTxn starts a memdb write transaction, tracking its changes when
// someone listens for them (OnChanges).
func (s *StateStore) writeMemTxn() *memdb.Txn {
	txn := s.db.Txn(true)
	if s.onChanges != nil {
		txn.TrackChanges()
	}
	return txn
}

// commit makes txn visible to readers and then runs the OnChanges and
// AfterCommit hooks.
func (s *StateStore) commit(txn *memdb.Txn) {
	// Changes must be read before Commit, which drops them.
	var changes memdb.Changes
	if s.onChanges != nil {
		changes = txn.Changes()
	}
	txn.Commit()
	if s.onChanges != nil && len(changes) > 0 {
		s.onChanges(changes)
	}
	if s.afterCommit != nil {
		s.afterCommit()
	}
}

func (s *StateStore) readTxn() *memdb.Txn { return s.db.Txn(false) }
