package state

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// A read by ID without a WatchSet must leave no watch channel on the
// entry: the radix tree keeps a channel as long as the entry lives, so
// reads nobody waits on (a node's heartbeat authentication, every one)
// would cost each node and alloc about 112 bytes for good.
func TestReadByIDWithoutWatchSetMakesNoWatchChannel(t *testing.T) {
	const n = 20_000
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	nodeIDs := make([]string, n)
	allocs := make([]*structs.Allocation, n)
	for i := range n {
		nodeIDs[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		mustNoErr(t, s.Write(uint64(2+i), func(tx *Txn) error { return tx.UpsertNode(testNode(nodeIDs[i]), nil) }))
		allocs[i] = testAlloc(fmt.Sprintf("%08x-1111-4000-8000-%012x", i, i), job, nodeIDs[i])
	}
	mustNoErr(t, s.Write(uint64(3+n), func(tx *Txn) error { return tx.UpsertAllocs(allocs) }))

	// Two rounds of GC first: what the writes left for the collector
	// (and sync.Pool's victim cache) must not be counted as freed by the reads.
	liveHeap()
	before := liveHeap()
	for range 2 {
		for i, id := range nodeIDs {
			node, err := s.NodeByID(nil, id)
			mustNoErr(t, err)
			if node == nil || node.ID != id {
				t.Fatalf("NodeByID(%q) = %v", id, node)
			}
			alloc, err := s.AllocByID(nil, allocs[i].ID)
			mustNoErr(t, err)
			if alloc == nil || alloc.ID != allocs[i].ID {
				t.Fatalf("AllocByID(%q) = %v", allocs[i].ID, alloc)
			}
		}
	}
	perPair := float64(int64(liveHeap())-int64(before)) / n
	runtime.KeepAlive(allocs) // the store keeps copies: these would be freed during the reads
	// A channel on each read leaf would be about 224 B per node and alloc.
	if perPair > 32 {
		t.Fatalf("reading a node and an alloc by ID without a WatchSet left %.0f B of heap behind: the reads made watch channels", perPair)
	}
	t.Logf("a node and an alloc read by ID without a WatchSet leave %.0f B", perPair)
	runtime.KeepAlive(s)
}

// Without a WatchSet a read seeks the index's lower bound; it must still
// return only the entry asked for, never its neighbour.
func TestReadByIDWithoutWatchSetReturnsOnlyTheEntryAskedFor(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("abc"), nil) }))
	job := mustJob(t, s, 2, testJob("web"))

	for _, tc := range []struct {
		id   string
		want bool
	}{{"abc", true}, {"ab", false}, {"a", false}, {"abd", false}, {"", false}, {"zzz", false}} {
		got, err := s.NodeByID(nil, tc.id)
		mustNoErr(t, err)
		if (got != nil) != tc.want || (got != nil && got.ID != tc.id) {
			t.Errorf("NodeByID(%q) = %v, want found=%v", tc.id, got, tc.want)
		}
	}
	if got, err := s.JobByID(nil, "other", job.ID); err != nil || got != nil {
		t.Errorf("JobByID in another namespace = %v, %v; want nil", got, err)
	}
	if got, err := s.JobByID(nil, job.Namespace, "we"); err != nil || got != nil {
		t.Errorf("JobByID of a prefix = %v, %v; want nil", got, err)
	}
	if got, err := s.JobByIDAndVersion(nil, job.Namespace, job.ID, job.Version+1); err != nil || got != nil {
		t.Errorf("JobByIDAndVersion of a version not stored = %v, %v; want nil", got, err)
	}
	if got, err := s.JobByIDAndVersion(nil, job.Namespace, job.ID, job.Version); err != nil || got == nil {
		t.Errorf("JobByIDAndVersion of the stored version = %v, %v; want the job", got, err)
	}
	if got, err := s.JobSummaryByID(nil, job.Namespace, job.ID); err != nil || got == nil || got.JobID != job.ID {
		t.Errorf("JobSummaryByID = %v, %v; want the job's summary", got, err)
	}
}

// With a WatchSet a read by ID still watches the entry: the set fires
// when the entry changes.
func TestReadByIDWithWatchSetFiresOnChange(t *testing.T) {
	s := testStateStore(t)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(testNode("n1"), nil) }))
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertNode(testNode("n2"), nil) }))

	ws := memdb.NewWatchSet()
	got, err := s.NodeByID(ws, "n1")
	mustNoErr(t, err)
	if got == nil {
		t.Fatal("NodeByID(n1) found nothing")
	}
	// A read of n2 without a WatchSet in between must not disturb it.
	if _, err := s.NodeByID(nil, "n2"); err != nil {
		t.Fatal(err)
	}
	changed := testNode("n1")
	changed.Name = "renamed"
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertNode(changed, nil) }))
	if timedOut := ws.Watch(time.After(10 * time.Second)); timedOut {
		t.Fatal("the WatchSet on n1 did not fire when n1 changed")
	}
}
