package state

import (
	"fmt"
	"runtime"
	"testing"

	memdb "github.com/hashicorp/go-memdb"
)

// The state store's radix tree is the patched go-immutable-radix in
// third_party/ (go.mod's replace): an index entry holds no watch channel
// until a query watches it. Upstream gives each entry's leaf and node a
// 96-byte channel at birth. This test fails if the replace is dropped or
// the patch is lost in an upgrade: an entry would cost at least 192 bytes
// more than it does.
func TestIndexEntriesHoldNoWatchChannelUntilWatched(t *testing.T) {
	const n = 50_000
	type row struct{ ID string }
	rows := make([]*row, n)
	for i := range rows {
		rows[i] = &row{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)}
	}
	db, err := memdb.NewMemDB(&memdb.DBSchema{Tables: map[string]*memdb.TableSchema{
		"rows": {Name: "rows", Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		}},
	}})
	mustNoErr(t, err)

	before := liveHeap()
	txn := db.Txn(true)
	for _, r := range rows {
		mustNoErr(t, txn.Insert("rows", r))
	}
	txn.Commit()
	perEntry := float64(int64(liveHeap())-int64(before)) / n

	// With lazy channels an entry of this table (its leaf and node in the
	// id index, the key, the edges above it) costs about 180 bytes; with a
	// channel on each leaf and node it costs about 415.
	const limit = 300
	if perEntry > limit {
		t.Fatalf("an index entry costs %.0f B of heap, more than %d: does the radix tree make a watch channel for every node again?", perEntry, limit)
	}
	t.Logf("an index entry costs %.0f B", perEntry)

	// Watching still works: a watch on an entry fires when it is replaced.
	ch, got, err := db.Txn(false).FirstWatch("rows", "id", rows[7].ID)
	mustNoErr(t, err)
	if got == nil {
		t.Fatal("the row is missing")
	}
	write := db.Txn(true)
	mustNoErr(t, write.Insert("rows", &row{ID: rows[7].ID}))
	write.Commit()
	select {
	case <-ch:
	default:
		t.Fatal("the watch on a replaced entry did not fire at the commit")
	}
	runtime.KeepAlive(db)
}
