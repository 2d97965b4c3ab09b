package structs

import (
	"reflect"
	"testing"
	"time"
)

// Every method that changes a plan's NodeUpdate or NodeAllocation names
// the node in the journal a scheduler reads with TouchedSince; a PopUpdate
// that removes nothing names none.
func TestPlanJournalNamesEveryChangedNode(t *testing.T) {
	p := &Plan{NodeUpdate: map[string][]*Allocation{}, NodeAllocation: map[string][]*Allocation{}}
	a := &Allocation{ID: "a", NodeID: "n1"}
	b := &Allocation{ID: "b", NodeID: "n2"}
	c := &Allocation{ID: "c", NodeID: "n3"}

	if nodes, mark := p.TouchedSince(0); nodes != nil || mark != 0 {
		t.Fatalf("empty plan: got %v, %d; want nothing, 0", nodes, mark)
	}
	p.AppendAlloc(a)
	p.AppendStoppedAlloc(b, "stop", "", "")
	nodes, mark := p.TouchedSince(0)
	if want := []string{"n1", "n2"}; !reflect.DeepEqual(nodes, want) || mark != 2 {
		t.Fatalf("got %v, %d; want %v, 2", nodes, mark, want)
	}
	p.PopUpdate(a) // a is not n1's last stop: nothing changes
	p.AppendLostAlloc(c, "lost", time.Unix(1, 0))
	p.AppendUnknownAlloc(a, "disconnected", "", time.Unix(1, 0))
	p.PopUpdate(b)
	nodes, mark = p.TouchedSince(mark)
	if want := []string{"n3", "n1", "n2"}; !reflect.DeepEqual(nodes, want) || mark != 5 {
		t.Fatalf("got %v, %d; want %v, 5", nodes, mark, want)
	}
	if nodes, again := p.TouchedSince(mark); nodes != nil || again != mark {
		t.Fatalf("nothing new: got %v, %d", nodes, again)
	}
	var none *Plan
	if nodes, m := none.TouchedSince(3); nodes != nil || m != 3 {
		t.Fatalf("nil plan: got %v, %d", nodes, m)
	}
}
