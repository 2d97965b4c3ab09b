package state

import (
	"reflect"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

// TestNodeStatusChangesShareTheRegistration: a status change, a drain and
// its end store new versions of a node that share what the client
// registered, and leave every earlier version as it was.
func TestNodeStatusChangesShareTheRegistration(t *testing.T) {
	s := TestStateStore(t)
	node := heapBenchNode(1)
	mustNoErr(t, s.UpsertNode(1, node))
	registered, _ := s.NodeByID(nil, node.ID)
	want := registered.Copy()

	mustNoErr(t, s.UpdateNodeStatus(2, node.ID, structs.NodeStatusDown, 100, &structs.NodeEvent{Message: "Node heartbeat missed", Subsystem: structs.NodeEventSubsystemCluster}))
	down, _ := s.NodeByID(nil, node.ID)
	mustNoErr(t, s.UpdateNodeDrain(3, node.ID, &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}, false, 200, nil))
	draining, _ := s.NodeByID(nil, node.ID)
	drainingWant := draining.Copy()
	mustNoErr(t, s.EndNodeDrain(4, node.ID, true, DrainStatusComplete, 300, &structs.NodeEvent{Message: "Node drain complete"}))
	done, _ := s.NodeByID(nil, node.ID)

	if down.Status != structs.NodeStatusDown || len(down.Events) != len(registered.Events)+1 {
		t.Fatalf("status change not applied: %s, %d events", down.Status, len(down.Events))
	}
	if done.DrainStrategy != nil || done.LastDrain == nil || done.LastDrain.Status != DrainStatusComplete {
		t.Fatalf("drain end not applied: %+v %+v", done.DrainStrategy, done.LastDrain)
	}
	if !reflect.DeepEqual(registered, want) {
		t.Fatal("a status change changed the version stored before it")
	}
	if !reflect.DeepEqual(draining, drainingWant) {
		t.Fatalf("ending the drain changed the draining version:\n got %+v\nwant %+v", draining.LastDrain, drainingWant.LastDrain)
	}
	for _, n := range []*structs.Node{down, draining, done} {
		if reflect.ValueOf(n.Attributes).Pointer() != reflect.ValueOf(registered.Attributes).Pointer() ||
			reflect.ValueOf(n.Drivers).Pointer() != reflect.ValueOf(registered.Drivers).Pointer() ||
			n.NodeResources != registered.NodeResources {
			t.Fatalf("version at %d copied the registration instead of sharing it", n.ModifyIndex)
		}
	}
}

// TestEqualNodeMetaIsStoredOnce: nodes in the same rack and zone share
// one meta map, and all share their drivers' equal attributes; a node
// elsewhere keeps its own, and no node's values change.
func TestEqualNodeMetaIsStoredOnce(t *testing.T) {
	s := TestStateStore(t)
	for i, idx := range []int{1, 151, 2} { // 1 and 151: rack r1, zone z1; 2: rack r2
		mustNoErr(t, s.UpsertNode(uint64(10+i), heapBenchNode(idx)))
	}
	get := func(i int) *structs.Node {
		n, err := s.NodeByID(nil, heapBenchNode(i).ID)
		mustNoErr(t, err)
		if !reflect.DeepEqual(n.Meta, heapBenchNode(i).Meta) || !reflect.DeepEqual(n.Drivers, heapBenchNode(i).Drivers) {
			t.Fatalf("node %d's meta or drivers changed on the way in", i)
		}
		return n
	}
	a, b, c := get(1), get(151), get(2)
	ptr := func(m map[string]string) uintptr { return reflect.ValueOf(m).Pointer() }
	if ptr(a.Meta) != ptr(b.Meta) {
		t.Error("two equal meta maps are stored twice")
	}
	if ptr(a.Meta) == ptr(c.Meta) {
		t.Error("a meta map was shared with a node whose meta differs")
	}
	if ptr(a.Drivers["mock_driver"].Attributes) != ptr(c.Drivers["mock_driver"].Attributes) {
		t.Error("equal driver attributes are stored twice")
	}
}
