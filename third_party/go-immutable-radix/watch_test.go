package iradix

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Tests of Drover's change (watch.go): channels made on first watch, with
// upstream's notification semantics.

// isFired reports whether a slot has been fired or holds a closed channel,
// without making a channel for an empty slot.
func isFired(s *watchSlot) bool {
	p := s.ch.Load()
	return p != nil && isClosed(*p)
}

// isOpen reports whether a watch channel has not fired.
func isOpen(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// slotsInUse counts the nodes and leaves of a tree that hold a channel.
func slotsInUse(r *Tree) int {
	n := 0
	for iter := r.root.rawIterator(); iter.Front() != nil; iter.Next() {
		node := iter.Front()
		if node.mutateCh.ch.Load() != nil {
			n++
		}
		if node.leaf != nil && node.leaf.mutateCh.ch.Load() != nil {
			n++
		}
	}
	return n
}

func treeOf(keys ...string) *Tree {
	txn := New().Txn()
	for _, k := range keys {
		txn.Insert([]byte(k), k)
	}
	return txn.Commit()
}

// watches takes the three kinds of watch a blocking query takes on r: a
// key's leaf, a key's finest node (the key is missing), and a prefix.
func watches(r *Tree) []<-chan struct{} {
	leaf, _, ok := r.Root().GetWatch([]byte("foo/bar"))
	if !ok {
		panic("foo/bar is missing")
	}
	missing, _, _ := r.Root().GetWatch([]byte("foo/nope"))
	iter := r.Root().Iterator()
	prefix := iter.SeekPrefixWatch([]byte("foo/"))
	return []<-chan struct{}{leaf, missing, prefix}
}

func updateFooBar(r *Tree) *Txn {
	txn := r.Txn()
	txn.TrackMutate(true)
	txn.Insert([]byte("foo/bar"), "new")
	return txn
}

func TestWatch_NoChannelIsMadeUntilSomeoneWatches(t *testing.T) {
	r := treeOf("foo/bar", "foo/baz", "zip")
	if n := slotsInUse(r); n != 0 {
		t.Fatalf("a fresh tree holds %d channels, want none", n)
	}

	// Reads without a watch make none either.
	r.Get([]byte("foo/bar"))
	r.Root().Iterator().SeekPrefix([]byte("foo/"))
	r.Root().ReverseIterator().SeekPrefix([]byte("foo/"))
	if n := slotsInUse(r); n != 0 {
		t.Fatalf("plain reads made %d channels, want none", n)
	}

	// A watch makes one channel: on the finest node, not along the path.
	ch1, _, _ := r.Root().GetWatch([]byte("foo/bar"))
	if n := slotsInUse(r); n != 1 {
		t.Fatalf("one watch made %d channels, want 1", n)
	}
	ch2, _, _ := r.Root().GetWatch([]byte("foo/bar"))
	if ch1 != ch2 {
		t.Fatal("two watches of one leaf got different channels")
	}
	if n := slotsInUse(r); n != 1 {
		t.Fatalf("a second watch of the same leaf made a channel: %d in use", n)
	}

	// A tracked transaction's new nodes start empty too.
	r2 := updateFooBar(r).Commit()
	if n := slotsInUse(r2); n != 0 {
		t.Fatalf("a committed transaction's tree holds %d channels, want none", n)
	}
}

func TestWatch_TakenBeforeCommitFiresAtCommit(t *testing.T) {
	r := treeOf("foo/bar", "foo/baz", "zip")
	ws := watches(r)
	unrelated, _, _ := r.Root().GetWatch([]byte("zip"))

	txn := updateFooBar(r)
	for i, ch := range ws {
		if !isOpen(ch) {
			t.Fatalf("watch %d fired before the commit", i)
		}
	}
	txn.Commit()
	for i, ch := range ws {
		if isOpen(ch) {
			t.Fatalf("watch %d did not fire at the commit", i)
		}
	}
	if !isOpen(unrelated) {
		t.Fatal("the watch of an unchanged leaf fired")
	}
}

func TestWatch_TakenBetweenWriteAndNotifyFiresAtNotify(t *testing.T) {
	r := treeOf("foo/bar", "foo/baz", "zip")
	txn := updateFooBar(r)
	// The transaction has tracked the nodes it replaced; their channels do
	// not exist yet. A blocking query reading the old snapshot now makes them.
	ws := watches(r)
	r2 := txn.CommitOnly()
	for i, ch := range ws {
		if !isOpen(ch) {
			t.Fatalf("watch %d fired before Notify", i)
		}
	}
	// And one more between CommitOnly and Notify.
	late, _, _ := r.Root().GetWatch([]byte("foo/bar"))
	txn.Notify()
	for i, ch := range append(ws, late) {
		if isOpen(ch) {
			t.Fatalf("watch %d did not fire at Notify", i)
		}
	}
	for i, ch := range watches(r2) {
		if !isOpen(ch) {
			t.Fatalf("watch %d of the new tree has fired", i)
		}
	}
	// A second Notify is a no-op, as upstream.
	txn.Notify()
}

func TestWatch_TakenOnAStaleSnapshotFiresAtOnce(t *testing.T) {
	r := treeOf("foo/bar", "foo/baz", "zip")
	r2 := updateFooBar(r).Commit()

	for i, ch := range watches(r) {
		if isOpen(ch) {
			t.Fatalf("watch %d of a replaced node did not fire at once", i)
		}
	}
	// Upstream's leaf channel for an unchanged key is shared by both trees
	// and stays open; so it does here.
	oldZip, _, _ := r.Root().GetWatch([]byte("zip"))
	newZip, _, _ := r2.Root().GetWatch([]byte("zip"))
	if oldZip != newZip || !isOpen(oldZip) {
		t.Fatal("an unchanged leaf's watch is not shared and open in both trees")
	}
}

func TestWatch_AbortedTransactionFiresNothing(t *testing.T) {
	r := treeOf("foo/bar", "foo/baz", "zip")
	before := watches(r)
	txn := updateFooBar(r)
	txn.Delete([]byte("zip"))
	// Never committed: the transaction is dropped.
	_ = txn
	after := watches(r)
	zip, _, _ := r.Root().GetWatch([]byte("zip"))
	for i, ch := range append(append(before, after...), zip) {
		if !isOpen(ch) {
			t.Fatalf("watch %d fired for a transaction that was never committed", i)
		}
	}
}

func TestWatch_CommitOnlyWithoutNotifyFiresNothing(t *testing.T) {
	r := treeOf("foo/bar", "foo/baz", "zip")
	ws := watches(r)
	updateFooBar(r).CommitOnly()
	for i, ch := range append(ws, watches(r)...) {
		if !isOpen(ch) {
			t.Fatalf("watch %d fired without Notify", i)
		}
	}
}

func TestWatch_UntrackedTransactionFiresNothing(t *testing.T) {
	r := treeOf("foo/bar", "foo/baz", "zip")
	ws := watches(r)
	txn := r.Txn()
	txn.Insert([]byte("foo/bar"), "new")
	txn.Delete([]byte("zip"))
	txn.Commit()
	for i, ch := range append(ws, watches(r)...) {
		if !isOpen(ch) {
			t.Fatalf("watch %d fired for a transaction without TrackMutate", i)
		}
	}
	if n := len(txn.trackChannels); n != 0 {
		t.Fatalf("an untracked transaction tracked %d slots", n)
	}
}

// The overflow path (more nodes replaced than the transaction tracks) walks
// both trees instead; it must fire watches taken before, between, and after
// the commit just the same.
func TestWatch_OverflowFiresAll(t *testing.T) {
	txn := New().Txn()
	keys := make([]string, 0, 2*defaultModifiedCache)
	for i := 0; i < 2*defaultModifiedCache; i++ {
		k := fmt.Sprintf("key/%06d", i)
		keys = append(keys, k)
		txn.Insert([]byte(k), i)
	}
	txn.Insert([]byte("other"), 0)
	r := txn.Commit()

	watchKey := func(r *Tree, k string) <-chan struct{} {
		ch, _, ok := r.Root().GetWatch([]byte(k))
		if !ok {
			t.Fatalf("%s is missing", k)
		}
		return ch
	}
	before := []<-chan struct{}{watchKey(r, keys[0]), watchKey(r, keys[len(keys)-1])}
	beforePrefix := r.Root().Iterator().SeekPrefixWatch([]byte("key/"))
	other := watchKey(r, "other")

	update := r.Txn()
	update.TrackMutate(true)
	for i, k := range keys {
		update.Insert([]byte(k), -i)
	}
	between := []<-chan struct{}{watchKey(r, keys[1]), watchKey(r, keys[len(keys)/2])}
	r2 := update.CommitOnly()
	if !update.trackOverflow {
		t.Fatal("the transaction did not overflow; the test does not test the slow path")
	}
	update.Notify()

	after := []<-chan struct{}{watchKey(r, keys[2]), r.Root().Iterator().SeekPrefixWatch([]byte("key/0"))}
	all := append(append(append(before, beforePrefix), between...), after...)
	for i, ch := range all {
		if isOpen(ch) {
			t.Fatalf("watch %d did not fire on the overflow path", i)
		}
	}
	if !isOpen(other) {
		t.Fatal("the overflow path fired the watch of an unchanged leaf")
	}
	if hasAnyClosedMutateCh(r2) {
		t.Fatal("a fired channel escaped into the new tree")
	}
}

// Watchers read the published tree and watch it while committers replace
// every key, the way blocking queries race the FSM. Every watch taken on a
// tree that was later replaced must have fired once the committers are done;
// every watch on the final tree must not. Half of the commits use the
// overflow path's algorithm. Run with -race.
func TestWatch_ConcurrentWatchersAndCommitters(t *testing.T) {
	const (
		keys       = 32
		commits    = 200
		committers = 2
		watchers   = 4
	)
	type published struct {
		tree    *Tree
		version int
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("k/%02d/x", i)) }

	txn := New().Txn()
	for i := 0; i < keys; i++ {
		txn.Insert(key(i), 0)
	}
	var current atomic.Pointer[published]
	current.Store(&published{tree: txn.Commit()})

	type taken struct {
		ch      <-chan struct{}
		version int
	}
	var (
		writeLock sync.Mutex // the radix tree has one writer at a time, as in memdb
		done      atomic.Bool
		wg        sync.WaitGroup
		results   = make([][]taken, watchers)
	)
	for c := 0; c < committers; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < commits/committers; i++ {
				writeLock.Lock()
				cur := current.Load()
				txn := cur.tree.Txn()
				txn.TrackMutate(true)
				for k := 0; k < keys; k++ {
					txn.Insert(key(k), cur.version+1)
				}
				next := &published{tree: txn.CommitOnly(), version: cur.version + 1}
				current.Store(next)
				if i%2 == 0 {
					txn.Notify()
				} else {
					txn.slowNotify()
				}
				writeLock.Unlock()
			}
		}()
	}
	var watchersWG sync.WaitGroup
	for w := 0; w < watchers; w++ {
		watchersWG.Add(1)
		go func(w int) {
			defer watchersWG.Done()
			// Watch until the committers are done, then ten more on the
			// final tree.
			for i, after := 0, 0; after < 10; i++ {
				if done.Load() {
					after++
				}
				cur := current.Load()
				var ch <-chan struct{}
				switch i % 3 {
				case 0:
					ch, _, _ = cur.tree.Root().GetWatch(key(i % keys))
				case 1:
					ch, _, _ = cur.tree.Root().GetWatch([]byte("k/missing"))
				default:
					ch = cur.tree.Root().Iterator().SeekPrefixWatch(key(i % keys)[:4])
				}
				results[w] = append(results[w], taken{ch, cur.version})
			}
		}(w)
	}
	wg.Wait()
	done.Store(true)
	watchersWG.Wait()

	final := current.Load().version
	if final != commits {
		t.Fatalf("final version %d, want %d", final, commits)
	}
	stale, fresh := 0, 0
	for _, rs := range results {
		for _, r := range rs {
			if r.version < final {
				stale++
				if isOpen(r.ch) {
					t.Fatalf("a watch taken on version %d did not fire by version %d", r.version, final)
				}
			} else {
				fresh++
				if !isOpen(r.ch) {
					t.Fatalf("a watch taken on the final version %d fired", final)
				}
			}
		}
	}
	if fresh == 0 {
		t.Fatal("no watch was taken on the final tree; the test checked only half")
	}
	t.Logf("%d watches on replaced trees fired, %d on the final tree did not", stale, fresh)
}

// A watch made in a race with Notify is the winner's channel either way: it
// fires at once or at Notify, never not at all.
func TestWatch_RaceBetweenWatchAndFire(t *testing.T) {
	for i := 0; i < 200; i++ {
		var s watchSlot
		got := make(chan (<-chan struct{}), 1)
		go func() { got <- s.watch() }()
		s.fire()
		select {
		case <-<-got:
		case <-time.After(10 * time.Second):
			t.Fatal("a watch racing fire never fired")
		}
		if !isFired(&s) {
			t.Fatal("a fired slot does not hold a closed channel")
		}
		s.fire() // a second fire is harmless
	}
}
