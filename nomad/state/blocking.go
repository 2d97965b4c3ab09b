package state

import (
	"context"

	memdb "github.com/hashicorp/go-memdb"
)

// QueryFn is one attempt at a blocking query. It reads from store, adds
// the watch channels of what it read to ws, and returns the answer and the
// index that answer reflects (usually the index of the tables it read).
type QueryFn func(ws memdb.WatchSet, store *StateStore) (resp interface{}, index uint64, err error)

// BlockingQuery answers a long poll: it runs fn and, while the index fn
// returns is not past minIndex, waits for something fn read to change, then
// runs fn again. It returns fn's last result when the index moves past
// minIndex or ctx ends (the deadline is the query's wait time, and running
// out of it is not an error). A minIndex of 0 never blocks.
//
// A watch may fire for a change that does not move fn's index (a neighbour
// in the radix tree changed, say), so BlockingQuery loops rather than
// returning an unchanged answer early. When the store is abandoned by a
// restore it returns at once: the caller's next query reads the new store.
//
// Each attempt reads one snapshot, so an answer and its index always come
// from the same committed state. Read from the live store, an answer built
// from several reads could hold the allocs before a write and the index
// after it; the caller would then block past a change it never saw.
func (s *StateStore) BlockingQuery(ctx context.Context, minIndex uint64, fn QueryFn) (interface{}, uint64, error) {
	for {
		ws := memdb.NewWatchSet()
		ws.Add(s.AbandonCh())
		resp, index, err := fn(ws, s.View())
		if err != nil || minIndex == 0 || index > minIndex || s.abandoned() || ctx.Err() != nil {
			return resp, index, err
		}
		if werr := ws.WatchCtx(ctx); werr != nil {
			// Timed out or cancelled: answer with the newest state.
			return fn(memdb.NewWatchSet(), s.View())
		}
	}
}

// View returns a read-only snapshot of the store as a *StateStore, for a
// query that reads several tables and must see one committed state. It
// shares the store's abandon channel so a restore still wakes watchers. A
// go-memdb snapshot is a copy of the tree's root and its watch channels
// are the live tree's, so watching what was read from it works as on the
// store itself.
func (s *StateStore) View() *StateStore {
	snap, _ := s.Snapshot()
	return &snap.StateStore
}
