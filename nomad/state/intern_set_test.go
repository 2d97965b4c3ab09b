package state

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// The set finds every string it was given, as the very copy it was given,
// across its growth, and finds no other.
func TestStringSetFindsWhatItHoldsAndNothingElse(t *testing.T) {
	set := newStringSet()
	if _, ok := set.get("absent"); ok {
		t.Fatal("an empty set found a string")
	}
	const n = 5000
	added := make([]string, n)
	for i := range added {
		added[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
		set.add(added[i])
	}
	if set.len() != n {
		t.Fatalf("len = %d, want %d", set.len(), n)
	}
	if 4*set.len() > 3*len(set.slots) {
		t.Fatalf("%d strings in %d slots: more than 3/4 full", set.len(), len(set.slots))
	}
	for _, s := range added {
		got, ok := set.get(strings.Clone(s))
		if !ok || !sameStorage(got, s) {
			t.Fatalf("get(%q) = %q, %v; want the copy that was added", s, got, ok)
		}
	}
	for _, s := range []string{"x", added[0][:35], added[0] + "0"} {
		if got, ok := set.get(s); ok {
			t.Fatalf("get(%q) found %q", s, got)
		}
	}
}

// An entry costs the set well under what a map[string]string entry costs
// (32 bytes a slot, before its spare room): the table holds an entry for
// every node's ID and name.
func TestStringSetEntryCostsLessThanAMapEntry(t *testing.T) {
	const n = 20_000
	strs := make([]string, n)
	for i := range strs {
		strs[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
	}
	before := liveHeap()
	set := newStringSet()
	for _, s := range strs {
		set.add(s)
	}
	perEntry := float64(int64(liveHeap())-int64(before)) / n
	runtime.KeepAlive(set)
	runtime.KeepAlive(strs)
	if perEntry > 30 {
		t.Fatalf("an entry costs the set %.0f B, want at most 30", perEntry)
	}
	t.Logf("an entry costs the set %.0f B", perEntry)
}
