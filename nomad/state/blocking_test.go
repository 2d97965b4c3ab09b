package state

import (
	"context"
	"errors"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"
)

// kvQuery is a blocking query on one key that signals each run on ran.
func kvQuery(key string, ran chan<- struct{}) QueryFn {
	return func(ws memdb.WatchSet, s *StateStore) (interface{}, uint64, error) {
		v, _, err := s.KVGet(ws, key)
		if err != nil {
			return nil, 0, err
		}
		idx, err := s.Index(TableKV)
		select {
		case ran <- struct{}{}:
		default:
		}
		return v, idx, err
	}
}

func TestBlockingQueryWakesOnAWriteToTheWatchedTable(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.KVSet("k", "old") }))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ran := make(chan struct{}, 1)
	type result struct {
		v   interface{}
		idx uint64
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, idx, err := s.BlockingQuery(ctx, 5, kvQuery("k", ran))
		done <- result{v, idx, err}
	}()
	<-ran // the first run saw index 5 and is (about to be) waiting
	select {
	case r := <-done:
		t.Fatalf("returned before any write: %+v", r)
	default:
	}
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.KVSet("k", "new") }))
	r := <-done
	if r.err != nil || r.v != "new" || r.idx != 6 {
		t.Fatalf("got %+v, want new at 6", r)
	}
}

func TestBlockingQueryTimesOutWithTheCurrentAnswer(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.KVSet("k", "v") }))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	v, idx, err := s.BlockingQuery(ctx, 5, kvQuery("k", nil))
	if err != nil || v != "v" || idx != 5 {
		t.Fatalf("got %v %d %v, want v 5 nil", v, idx, err)
	}
	if ctx.Err() == nil {
		t.Fatal("returned before the deadline without a write")
	}
}

func TestBlockingQueryWithoutMinIndexDoesNotBlock(t *testing.T) {
	s := testStateStore(t)
	v, idx, err := s.BlockingQuery(context.Background(), 0, kvQuery("k", nil))
	if err != nil || v != "" || idx != 0 {
		t.Fatalf("got %v %d %v", v, idx, err)
	}
}

func TestBlockingQueryReturnsWhenTheStoreIsAbandoned(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.KVSet("k", "v") }))
	ran := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, _, err := s.BlockingQuery(context.Background(), 5, kvQuery("k", ran))
		done <- err
	}()
	<-ran
	s.Abandon()
	s.Abandon() // idempotent
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestSnapshotMinIndexWaitsForALaterWrite(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.KVSet("k", "v5") }))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	type result struct {
		snap *StateSnapshot
		err  error
	}
	done := make(chan result, 1)
	go func() {
		snap, err := s.SnapshotMinIndex(ctx, 7)
		done <- result{snap, err}
	}()
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.KVSet("k", "v6") }))
	select {
	case r := <-done:
		t.Fatalf("returned at index 6 while waiting for 7: %+v", r)
	default:
	}
	mustNoErr(t, s.Write(7, func(tx *Txn) error { return tx.KVSet("k", "v7") }))
	r := <-done
	mustNoErr(t, r.err)
	if v, _, _ := r.snap.KVGet(nil, "k"); v != "v7" {
		t.Fatalf("snapshot sees %q, want v7", v)
	}

	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	if _, err := s.SnapshotMinIndex(short, 100); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting for an index that never comes: %v", err)
	}
	if snap, err := s.SnapshotMinIndex(context.Background(), 3); err != nil || snap == nil {
		t.Fatalf("an index already reached must not wait: %v", err)
	}
}

func TestSnapshotMinIndexFailsWhenTheStoreIsAbandoned(t *testing.T) {
	s := testStateStore(t)
	done := make(chan error, 1)
	go func() {
		_, err := s.SnapshotMinIndex(context.Background(), 10)
		done <- err
	}()
	s.Abandon()
	if err := <-done; !errors.Is(err, ErrAbandoned) {
		t.Fatalf("err = %v, want ErrAbandoned", err)
	}
}

func TestSnapshotIsolation(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	snap, err := s.Snapshot()
	mustNoErr(t, err)
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertNode(testNode("n2"), nil) }))
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpdateNodeStatus("n1", "down", 1, nil) }))

	if n, _ := snap.NodeByID(nil, "n2"); n != nil {
		t.Fatal("a node written after the snapshot is visible in it")
	}
	if n, _ := snap.NodeByID(nil, "n1"); n.Status != "ready" {
		t.Fatalf("snapshot sees status %q", n.Status)
	}
	if idx, _ := snap.LatestIndex(); idx != 1 {
		t.Fatalf("snapshot latest index = %d, want 1", idx)
	}
	mustNoErr(t, snap.Write(4, func(tx *Txn) error { return tx.UpsertNode(testNode("only-in-snapshot"), nil) }))
	if n, _ := s.NodeByID(nil, "only-in-snapshot"); n != nil {
		t.Fatal("a write to a snapshot reached the store")
	}
}

// TestViewWatchesFireOnWritesToTheLiveStore shows that what a query watches
// through View (a go-memdb snapshot) is woken by a later write to the store
// itself: BlockingQuery relies on it, and would otherwise only return when
// its wait ran out. It also covers a write committed between taking the view
// and reading from it.
func TestViewWatchesFireOnWritesToTheLiveStore(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.KVSet("k", "old") }))
	mustNoErr(t, s.Write(6, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))

	fired := func(ws memdb.WatchSet) bool {
		for ch := range ws {
			select {
			case <-ch:
				return true
			default:
			}
		}
		return false
	}
	waitFired := func(ws memdb.WatchSet, what string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ws.WatchCtx(ctx); err != nil {
			t.Fatalf("%s: a write to the live store did not wake a watch taken through View", what)
		}
	}

	// A key read through a view, then written on the store.
	view := s.View()
	kvWS := memdb.NewWatchSet()
	if v, _, err := view.KVGet(kvWS, "k"); err != nil || v != "old" {
		t.Fatalf("view reads %q %v", v, err)
	}
	nodesWS := memdb.NewWatchSet()
	it, err := view.Nodes(nodesWS)
	mustNoErr(t, err)
	if it.Next() == nil {
		t.Fatal("view sees no node")
	}
	if fired(kvWS) || fired(nodesWS) {
		t.Fatal("a watch fired before any write")
	}
	mustNoErr(t, s.Write(7, func(tx *Txn) error { return tx.KVSet("k", "new") }))
	waitFired(kvWS, "kv key")
	if v, _, _ := view.KVGet(nil, "k"); v != "old" {
		t.Fatalf("the view changed under the reader: %q", v)
	}
	mustNoErr(t, s.Write(8, func(tx *Txn) error { return tx.UpdateNodeStatus("n1", "down", 1, nil) }))
	waitFired(nodesWS, "node table")

	// A view taken before a write and read after it: its watch is already
	// fired, so the blocking query re-runs on a newer view.
	late := s.View()
	mustNoErr(t, s.Write(9, func(tx *Txn) error { return tx.KVSet("k", "newer") }))
	lateWS := memdb.NewWatchSet()
	if v, _, _ := late.KVGet(lateWS, "k"); v != "new" {
		t.Fatalf("view taken at 8 reads %q", v)
	}
	waitFired(lateWS, "write between View and the read")
}
