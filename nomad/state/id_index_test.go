package state

import (
	"slices"
	"strings"
	"testing"
	"unsafe"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/drover-sched/drover/structs"
)

// The id index's key is the ID's own bytes: a copy would be a second
// copy of every stored object's ID for as long as it lives.
func TestIDIndexKeyIsTheIDItself(t *testing.T) {
	node := testNode(strings.Clone("0f1e2d3c-0000-4000-8000-000000000001"))
	ok, key, err := (&idIndexer{Field: "ID"}).FromObject(node)
	if err != nil || !ok {
		t.Fatalf("FromObject = %v, %v", ok, err)
	}
	if string(key) != node.ID {
		t.Fatalf("key = %q, want the ID %q", key, node.ID)
	}
	if unsafe.SliceData(key) != unsafe.StringData(node.ID) {
		t.Error("the key is a copy of the ID, not the ID's bytes")
	}
	if ok, _, err := (&idIndexer{Field: "ID"}).FromObject(testNode("")); ok || err != nil {
		t.Errorf("an object without an ID: indexed = %v, err = %v; want not indexed", ok, err)
	}
}

// Bad lookups name the field and what a lookup takes.
func TestIDIndexRefusesBadArguments(t *testing.T) {
	x := &idIndexer{Field: "ID"}
	for _, args := range [][]any{{}, {"a", "b"}, {7}} {
		if _, err := x.FromArgs(args...); err == nil || !strings.Contains(err.Error(), "lookup by ID") {
			t.Errorf("FromArgs(%v) error = %v; want one naming the lookup by ID", args, err)
		}
	}
	if _, _, err := x.FromObject(struct{ Name string }{"n"}); err == nil || !strings.Contains(err.Error(), "no string field ID") {
		t.Errorf("FromObject of a struct without ID: error = %v", err)
	}
}

// IDs that are prefixes of one another stay apart, lookups by prefix
// find exactly the IDs that start with it, and a full scan is in ID
// order, as with NUL-terminated keys.
func TestIDIndexKeepsPrefixesApartAndOrder(t *testing.T) {
	s := testStateStore(t)
	ids := []string{"ab-1", "a", "ab", "abc", "b"}
	for i, id := range ids {
		mustNoErr(t, s.Write(uint64(1+i), func(tx *Txn) error { return tx.UpsertNode(testNode(id), nil) }))
	}
	for _, id := range ids {
		// Without a WatchSet (a lower-bound seek) and with one (an
		// exact radix lookup).
		for _, ws := range []memdb.WatchSet{nil, memdb.NewWatchSet()} {
			got, err := s.NodeByID(ws, id)
			mustNoErr(t, err)
			if got == nil || got.ID != id {
				t.Errorf("NodeByID(%q) = %v", id, got)
			}
		}
	}
	iter, err := s.NodesByIDPrefix(nil, "ab")
	mustNoErr(t, err)
	var byPrefix []string
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		byPrefix = append(byPrefix, raw.(*structs.Node).ID)
	}
	if want := []string{"ab", "ab-1", "abc"}; !slices.Equal(byPrefix, want) {
		t.Errorf("nodes with prefix ab = %v, want %v", byPrefix, want)
	}
	all, err := s.NodesByIDPrefix(nil, "")
	mustNoErr(t, err)
	var scan []string
	for raw := all.Next(); raw != nil; raw = all.Next() {
		scan = append(scan, raw.(*structs.Node).ID)
	}
	sorted := slices.Sorted(slices.Values(ids))
	if !slices.Equal(scan, sorted) {
		t.Errorf("scan = %v, want the IDs in order %v", scan, sorted)
	}
}
