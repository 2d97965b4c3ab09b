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
	s := testStateStore(t)
	node := heapBenchNode(1)
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(node, nil) }))
	registered, _ := s.NodeByID(nil, node.ID)
	want := registered.Copy()

	mustNoErr(t, s.Write(2, func(tx *Txn) error {
		return tx.UpdateNodeStatus(node.ID, structs.NodeStatusDown, 100, &structs.NodeEvent{Message: "Node heartbeat missed", Subsystem: structs.NodeEventSubsystemCluster})
	}))
	down, _ := s.NodeByID(nil, node.ID)
	mustNoErr(t, s.Write(3, func(tx *Txn) error {
		return tx.UpdateNodeDrain(node.ID, &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}}, false, 200, nil, DrainOperator{})
	}))
	draining, _ := s.NodeByID(nil, node.ID)
	drainingWant := draining.Copy()
	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.EndNodeDrain(node.ID, true, DrainStatusComplete, 300, &structs.NodeEvent{Message: "Node drain complete"}, DrainOperator{})
	}))
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
		if !n.Attributes.Same(registered.Attributes) ||
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
	s := testStateStore(t)
	for i, idx := range []int{1, 151, 2} { // 1 and 151: rack r1, zone z1; 2: rack r2
		mustNoErr(t, s.Write(uint64(10+i), func(tx *Txn) error { return tx.UpsertNode(heapBenchNode(idx), nil) }))
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

// TestEqualRegistrationsShareTheirRecords: nodes of one machine type
// share one copy of their resources, reservations and drivers; a node
// with other resources keeps its own; every node reads back as it was
// registered.
func TestEqualRegistrationsShareTheirRecords(t *testing.T) {
	s := testStateStore(t)
	a, b, c := heapBenchNode(1), heapBenchNode(2), heapBenchNode(3)
	c.NodeResources.Memory.MemoryMB *= 2
	c = decoded(c)
	for i, n := range []*structs.Node{a, b, c} {
		mustNoErr(t, s.Write(uint64(10+i), func(tx *Txn) error { return tx.UpsertNode(n, nil) }))
	}
	sa, sb, sc := storedNode(t, s, a), storedNode(t, s, b), storedNode(t, s, c)
	if sa.NodeResources != sb.NodeResources || sa.ReservedResources != sb.ReservedResources {
		t.Error("equal resources or reservations are stored twice")
	}
	if mapPtr(sa.Drivers) != mapPtr(sb.Drivers) || sa.Drivers["mock_driver"] != sc.Drivers["mock_driver"] {
		t.Error("equal drivers are stored twice")
	}
	if sa.NodeResources == sc.NodeResources {
		t.Error("a node with twice the memory shares the resources of one without")
	}
	if sa.Attributes.Keys() != sb.Attributes.Keys() || sa.Attributes.Keys() != sc.Attributes.Keys() {
		t.Error("nodes with the same attribute keys store the keys more than once")
	}
	for _, n := range []*structs.Node{a, b, c} {
		if got := storedNode(t, s, n).Attributes; !got.Equal(n.Attributes) {
			t.Errorf("node %s's attributes are stored as %v, registered as %v", n.ID, got, n.Attributes)
		}
	}
}

// TestRegisteredNodesShareTheirFirstEventsTexts: the event a node is
// registered with ("Node registered") arrives decoded with every node;
// the stored nodes share its texts.
func TestRegisteredNodesShareTheirFirstEventsTexts(t *testing.T) {
	s := testStateStore(t)
	var stored []*structs.Node
	for i := range 2 {
		n := heapBenchNode(i)
		n.Events = []*structs.NodeEvent{{Message: "Node registered", Subsystem: structs.NodeEventSubsystemCluster, Timestamp: time.Unix(int64(i), 0)}}
		n = decoded(n)
		mustNoErr(t, s.Write(uint64(10+i), func(tx *Txn) error { return tx.UpsertNode(n, nil) }))
		stored = append(stored, storedNode(t, s, n))
	}
	a, b := stored[0].Events[0], stored[1].Events[0]
	if a.Message != "Node registered" || !sameStorage(a.Message, b.Message) || !sameStorage(a.Subsystem, b.Subsystem) {
		t.Errorf("the first events' texts are stored once per node: %q %q", a.Message, b.Message)
	}
}

// TestChangingSharedRecordsLeavesOtherNodesAlone: a node that registers
// again with other resources, reservations and driver health stores new
// records; the node that shared its old ones, and its own old version,
// read as before.
func TestChangingSharedRecordsLeavesOtherNodesAlone(t *testing.T) {
	s := testStateStore(t)
	a, b := heapBenchNode(1), heapBenchNode(2)
	mustNoErr(t, s.Write(10, func(tx *Txn) error { return tx.UpsertNode(a, nil) }))
	mustNoErr(t, s.Write(11, func(tx *Txn) error { return tx.UpsertNode(b, nil) }))
	oldA, sb := storedNode(t, s, a), storedNode(t, s, b)
	wantOldA, wantB := oldA.Copy(), sb.Copy()
	if oldA.NodeResources != sb.NodeResources {
		t.Fatal("the nodes do not share their resources: the test proves nothing")
	}

	changed := a.Copy()
	changed.NodeResources.Cpu.CpuShares = 1000
	changed.ReservedResources = &structs.NodeReservedResources{Memory: structs.NodeReservedMemoryResources{MemoryMB: 256}}
	changed.Drivers["mock_driver"].Healthy = false
	changed.Drivers["mock_driver"].HealthDescription = "Unhealthy"
	changed.Drivers["mock_driver"].Attributes["driver.mock_driver"] = "0"
	mustNoErr(t, s.Write(12, func(tx *Txn) error { return tx.UpsertNode(decoded(changed), nil) }))

	newA := storedNode(t, s, a)
	if newA.NodeResources.Cpu.CpuShares != 1000 || newA.ReservedResources.Memory.MemoryMB != 256 ||
		newA.Drivers["mock_driver"].Healthy || newA.Drivers["mock_driver"].Attributes["driver.mock_driver"] != "0" {
		t.Fatalf("the new registration was not stored: %+v %+v %+v", newA.NodeResources.Cpu, newA.ReservedResources, newA.Drivers["mock_driver"])
	}
	if !reflect.DeepEqual(storedNode(t, s, b), wantB) || !reflect.DeepEqual(sb, wantB) {
		t.Error("changing one node's records changed another node that shared them")
	}
	if !reflect.DeepEqual(oldA, wantOldA) {
		t.Error("registering again changed the node's stored version")
	}
}

// TestRegisteringAgainSharesThePreviousVersion: a client that registers
// again with the same fingerprint stores a version that shares every
// record of the one before, events included, and leaves that one as it
// was.
func TestRegisteringAgainSharesThePreviousVersion(t *testing.T) {
	s := testStateStore(t)
	n := heapBenchNode(7)
	mustNoErr(t, s.Write(10, func(tx *Txn) error {
		return tx.UpsertNode(n, &structs.NodeEvent{Message: "Node registered", Subsystem: structs.NodeEventSubsystemCluster})
	}))
	first := storedNode(t, s, n)
	want := first.Copy()
	mustNoErr(t, s.Write(11, func(tx *Txn) error {
		return tx.UpsertNode(heapBenchNode(7), &structs.NodeEvent{Message: "Node re-registered", Subsystem: structs.NodeEventSubsystemCluster})
	}))
	second := storedNode(t, s, n)

	if !reflect.DeepEqual(first, want) {
		t.Fatal("registering again changed the version stored before")
	}
	if len(second.Events) != 2 || second.Events[0] != first.Events[0] || second.Events[1].Message != "Node re-registered" {
		t.Fatalf("events: got %d, first shared %v", len(second.Events), len(second.Events) > 0 && second.Events[0] == first.Events[0])
	}
	if !second.Attributes.Same(first.Attributes) || mapPtr(second.Meta) != mapPtr(first.Meta) ||
		mapPtr(second.Drivers) != mapPtr(first.Drivers) || second.NodeResources != first.NodeResources ||
		second.ReservedResources != first.ReservedResources {
		t.Error("an equal registration copied the stored version's records instead of sharing them")
	}
}

func storedNode(t *testing.T, s *StateStore, n *structs.Node) *structs.Node {
	t.Helper()
	got, err := s.NodeByID(nil, n.ID)
	mustNoErr(t, err)
	if got == nil {
		t.Fatalf("node %s is not stored", n.ID)
	}
	return got
}

func mapPtr[M ~map[K]V, K comparable, V any](m M) uintptr { return reflect.ValueOf(m).Pointer() }
