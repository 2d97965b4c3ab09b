package nomad

import (
	"errors"
	"fmt"
	"testing"
)

func TestGCBatchWritesFullEntriesThenTheRest(t *testing.T) {
	var entries [][]string
	b := gcBatch{write: func(ids []string) (uint64, error) {
		entries = append(entries, ids)
		return uint64(100 + len(entries)), nil
	}}
	n := 2*gcMaxObjectsPerEntry + 3
	for i := 0; i < n; i++ {
		if err := b.add(fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	last, err := b.done()
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 || len(entries[0]) != gcMaxObjectsPerEntry || len(entries[1]) != gcMaxObjectsPerEntry || len(entries[2]) != 3 {
		t.Fatalf("entry sizes %d; want two full entries and one of 3", sizes(entries))
	}
	if entries[1][0] != fmt.Sprint(gcMaxObjectsPerEntry) || entries[2][2] != fmt.Sprint(n-1) {
		t.Fatalf("IDs out of order: entry 2 starts %s, entry 3 ends %s", entries[1][0], entries[2][2])
	}
	if last != 103 {
		t.Fatalf("last index %d, want the final entry's (103)", last)
	}
}

func TestGCBatchNothingQueuedWritesNothing(t *testing.T) {
	b := gcBatch{write: func(ids []string) (uint64, error) {
		t.Fatalf("wrote %v with nothing queued", ids)
		return 0, nil
	}}
	if last, err := b.done(); last != 0 || err != nil {
		t.Fatalf("done = %d, %v; want 0, nil", last, err)
	}
}

func TestGCBatchStopsOnAFailedWrite(t *testing.T) {
	boom := errors.New("boom")
	writes := 0
	b := gcBatch{write: func(ids []string) (uint64, error) {
		writes++
		return 0, boom
	}}
	for i := 0; i < gcMaxObjectsPerEntry; i++ {
		if err := b.add(fmt.Sprint(i)); err != nil {
			t.Fatalf("add %d before the entry was full: %v", i, err)
		}
	}
	if err := b.add("one more"); !errors.Is(err, boom) {
		t.Fatalf("add past a full entry: %v, want the write's error", err)
	}
	if writes != 1 {
		t.Fatalf("%d writes, want 1", writes)
	}
}

func sizes(entries [][]string) []int {
	out := make([]int, len(entries))
	for i, e := range entries {
		out[i] = len(e)
	}
	return out
}
