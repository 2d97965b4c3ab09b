package state

import (
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/drover-sched/drover/structs"
)

// sameStorage reports whether a and b are equal strings sharing one copy.
func sameStorage(a, b string) bool {
	return a == b && unsafe.StringData(a) == unsafe.StringData(b)
}

func TestInternReturnsOneCopyOfEqualStrings(t *testing.T) {
	tab := newInternTable()
	a := tab.intern(strings.Clone("dc1-rack-7"))
	runtime.GC() // the table's copy survives a collection, unlike unique's without a handle
	b := tab.intern(strings.Clone("dc1-rack-7"))
	if !sameStorage(a, b) {
		t.Fatal("two equal strings interned apart do not share storage")
	}
	long := strings.Repeat("x", internMaxLen+1)
	if got := tab.intern(long); !sameStorage(got, long) || tab.m.len() != 1 {
		t.Fatalf("a string longer than %d was kept (%d entries)", internMaxLen, tab.m.len())
	}
}

func TestInternTableIsBounded(t *testing.T) {
	tab := newInternTable()
	for i := range internMaxEntries + 10 {
		s := strings.Repeat("k", 1+i%7) + string(rune('a'+i%26)) + strings.Repeat("z", i/182)
		if got := tab.intern(s); got != s {
			t.Fatalf("intern changed %q to %q", s, got)
		}
		if tab.m.len() > internMaxEntries {
			t.Fatalf("table holds %d entries, bound is %d", tab.m.len(), internMaxEntries)
		}
	}
}

// TestStoredAllocsShareTheirStrings: allocs that arrive separately
// decoded (as from raft entries) come out of the store equal to what went
// in, with the strings they have in common stored once.
func TestStoredAllocsShareTheirStrings(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertNode(heapBenchNode(1), nil) }))
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertNode(heapBenchNode(11), nil) }))
	n1, _ := s.NodeByID(nil, heapBenchNode(1).ID)
	n2, _ := s.NodeByID(nil, heapBenchNode(11).ID)
	for name, pair := range map[string][2]string{
		"attribute":        {n1.Attributes.Value("kernel.name"), n2.Attributes.Value("kernel.name")},
		"datacenter":       {n1.Datacenter, n2.Datacenter},
		"driver attribute": {n1.Drivers["mock_driver"].Attributes["driver.mock_driver"], n2.Drivers["mock_driver"].Attributes["driver.mock_driver"]},
	} {
		if !sameStorage(pair[0], pair[1]) {
			t.Errorf("two nodes' %s %q is stored twice", name, pair[0])
		}
	}
	if !reflect.DeepEqual(n1.Attributes, heapBenchNode(1).Attributes) || !reflect.DeepEqual(n1.Drivers, heapBenchNode(1).Drivers) {
		t.Fatal("interning changed a node's values")
	}

	evalID := "eval-1"
	in := []*structs.Allocation{heapBenchAlloc(job, evalID, 0, n1.ID), heapBenchAlloc(job, evalID, 1, n1.ID)}
	want := []*structs.Allocation{in[0].Copy(), in[1].Copy()}
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpsertAllocs(in) }))
	at := time.Unix(1_700_000_000, 0)
	mustNoErr(t, s.Write(5, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{
			heapBenchReport(in[0].ID, structs.AllocClientStatusRunning, at),
			heapBenchReport(in[1].ID, structs.AllocClientStatusRunning, at),
		})
	}))
	a, _ := s.AllocByID(nil, in[0].ID)
	b, _ := s.AllocByID(nil, in[1].ID)
	for name, pair := range map[string][2]string{
		"NodeID":       {a.NodeID, b.NodeID},
		"JobID":        {a.JobID, b.JobID},
		"EvalID":       {a.EvalID, b.EvalID},
		"TaskGroup":    {a.TaskGroup, b.TaskGroup},
		"ClientStatus": {a.ClientStatus, b.ClientStatus},
		"task state":   {a.TaskStates["web"].State, b.TaskStates["web"].State},
		"event type":   {a.TaskStates["web"].Events[2].Type, b.TaskStates["web"].Events[2].Type},
		"event text":   {a.TaskStates["web"].Events[2].DisplayMessage, b.TaskStates["web"].Events[2].DisplayMessage},
		"score name":   {a.Metrics.ScoreMetaData[0].Scores.Names()[0], b.Metrics.ScoreMetaData[3].Scores.Names()[0]},
		"scored node":  {a.Metrics.ScoreMetaData[1].NodeID, b.Metrics.ScoreMetaData[0].NodeID},
		"alloc's node": {a.NodeID, n1.ID},
	} {
		if !sameStorage(pair[0], pair[1]) {
			t.Errorf("%s %q is stored twice", name, pair[0])
		}
	}
	for i, got := range []*structs.Allocation{a, b} {
		if !reflect.DeepEqual(got.Metrics, want[i].Metrics) || !reflect.DeepEqual(got.AllocatedResources, want[i].AllocatedResources) ||
			got.Name != want[i].Name || got.NodeName != want[i].NodeName {
			t.Errorf("alloc %d changed on the way into the store", i)
		}
	}
}

// TestClientUpdatesLeaveTheMetricAlone: the placement metric the
// scheduler stored is the servers'; client reports neither change it
// (even one carrying a metric of its own) nor copy it.
func TestClientUpdatesLeaveTheMetricAlone(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	in := heapBenchAlloc(job, "eval-1", 0, "node-1")
	want := in.Metrics.Copy()
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{in}) }))
	placed, _ := s.AllocByID(nil, in.ID)

	at := time.Unix(1_700_000_000, 0)
	report := heapBenchReport(in.ID, structs.AllocClientStatusRunning, at)
	report.Metrics = &structs.AllocMetric{NodesEvaluated: 99, ScoreMetaData: []*structs.NodeScoreMeta{{NodeID: "forged"}}}
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{report}) }))
	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.UpdateAllocsFromClient([]*structs.Allocation{heapBenchReport(in.ID, structs.AllocClientStatusComplete, at)})
	}))

	got, _ := s.AllocByID(nil, in.ID)
	if got.ClientStatus != structs.AllocClientStatusComplete || got.ModifyIndex != 4 {
		t.Fatalf("the reports were not applied: %s at %d", got.ClientStatus, got.ModifyIndex)
	}
	if !reflect.DeepEqual(got.Metrics, want) {
		t.Fatalf("metric changed by client reports:\n got %#v\nwant %#v", got.Metrics, want)
	}
	if got.Metrics != placed.Metrics {
		t.Fatal("a client report copied the metric; versions of an alloc share it")
	}
	if !reflect.DeepEqual(placed.Metrics, want) || placed.ClientStatus != structs.AllocClientStatusPending {
		t.Fatal("a client report changed the version stored before it")
	}
}

// TestEqualGrantsAndCountsAreStoredOnce: allocs of one job version
// without ports get one stored grant, and a placement's count maps are
// stored once; a grant with ports is the alloc's own.
func TestEqualGrantsAndCountsAreStoredOnce(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	a := heapBenchAlloc(job, "eval-1", 0, "node-1")
	b := heapBenchAlloc(job, "eval-1", 1, "node-2")
	withPorts := heapBenchAlloc(job, "eval-1", 2, "node-3")
	withPorts.AllocatedResources.Shared.Ports = structs.AllocatedPorts{{Label: "http", Value: 20001}}
	other := heapBenchAlloc(job, "eval-1", 3, "node-4")
	other.AllocatedResources.Tasks["web"].Memory.MemoryMB = 128
	want := map[string]*structs.AllocatedResources{}
	for _, x := range []*structs.Allocation{a, b, withPorts, other} {
		want[x.ID] = x.AllocatedResources.Copy()
	}
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a, b, withPorts, other}) }))
	got := map[string]*structs.Allocation{}
	for _, x := range []*structs.Allocation{a, b, withPorts, other} {
		got[x.ID], _ = s.AllocByID(nil, x.ID)
		if !reflect.DeepEqual(got[x.ID].AllocatedResources, want[x.ID]) {
			t.Fatalf("alloc %s: grant changed on the way in:\n got %#v\nwant %#v", x.ID, got[x.ID].AllocatedResources, want[x.ID])
		}
	}
	if got[a.ID].AllocatedResources != got[b.ID].AllocatedResources {
		t.Error("two equal grants without ports are stored twice")
	}
	if got[withPorts.ID].AllocatedResources == got[a.ID].AllocatedResources || got[other.ID].AllocatedResources == got[a.ID].AllocatedResources {
		t.Error("a grant was shared with one that differs")
	}
	if reflect.ValueOf(got[a.ID].Metrics.NodesAvailable).Pointer() != reflect.ValueOf(got[b.ID].Metrics.NodesAvailable).Pointer() {
		t.Error("two equal NodesAvailable maps are stored twice")
	}
}

// TestInternIsSafeForConcurrentWriters: snapshots (the plan applier's
// what-if states) write while the FSM does, and share the table.
func TestInternIsSafeForConcurrentWriters(t *testing.T) {
	tab := newInternTable()
	const writers, each = 8, 500
	got := make([][]string, writers)
	done := make(chan int)
	for w := range writers {
		go func() {
			for i := range each {
				got[w] = append(got[w], tab.intern(strings.Clone("node-"+strings.Repeat("x", i%50))))
			}
			done <- w
		}()
	}
	for range writers {
		<-done
	}
	for w := 1; w < writers; w++ {
		for i := range each {
			if !sameStorage(got[w][i], got[0][i]) {
				t.Fatalf("writer %d's %q is not writer 0's copy", w, got[w][i])
			}
		}
	}
}

// TestEqualCandidateScoresAreStoredOnce: the top candidates of two allocs
// that score alike share one scores slice; a score that differs (even
// only in its sign, as 0 and -0 do) keeps its own, and no value changes,
// the caller's included.
func TestEqualCandidateScoresAreStoredOnce(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	a := heapBenchAlloc(job, "eval-1", 0, "node-1")
	b := heapBenchAlloc(job, "eval-1", 1, "node-2")
	b.Metrics.ScoreMetaData[1].Scores.Set("node-affinity", 0.25)
	b.Metrics.ScoreMetaData[2].Scores.Set("job-anti-affinity", math.Copysign(0, -1))
	wantA, wantB := a.Metrics.Copy(), b.Metrics.Copy()
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a, b}) }))
	ga, _ := s.AllocByID(nil, a.ID)
	gb, _ := s.AllocByID(nil, b.ID)
	if !reflect.DeepEqual(ga.Metrics, wantA) || !reflect.DeepEqual(gb.Metrics, wantB) {
		t.Fatal("scores changed on the way in")
	}
	if !reflect.DeepEqual(a.Metrics, wantA) || !reflect.DeepEqual(b.Metrics, wantB) {
		t.Fatal("storing the allocs changed the caller's metrics")
	}
	scores := func(x *structs.Allocation, i int) *float64 {
		return unsafe.SliceData(x.Metrics.ScoreMetaData[i].Scores.Scores())
	}
	for i, shared := range []bool{true, false, false, true, true} {
		if got := scores(ga, i) == scores(gb, i); got != shared {
			t.Errorf("candidate %d: shared %v, want %v", i, got, shared)
		}
	}
	if scores(ga, 0) == scores(a, 0) {
		t.Error("the store kept the caller's scores slice")
	}
}

// A node's unique.* attribute values differ per node by convention: the
// store shares one with a copy the table already holds (the hostname is
// often the node's name) but never adds one, while other values and every
// key are interned as before.
func TestNodeUniqueAttributeValuesAreNotAddedToTheInternTable(t *testing.T) {
	s := testStateStore(t)
	n := testNode("unique-attrs-node")
	n.Name = "unique-attrs-host"
	n.Attributes = structs.NewAttributes(map[string]string{
		"unique.hostname":           strings.Clone("unique-attrs-host"),
		"unique.network.ip-address": strings.Clone("10.77.66.55"),
		"kernel.name":               strings.Clone("linux-unique-attrs-test"),
	})
	mustNoErr(t, s.Write(1, func(tx *Txn) error { return tx.UpsertNode(n, nil) }))
	stored, err := s.NodeByID(nil, n.ID)
	mustNoErr(t, err)

	interned.mu.Lock()
	_, ipKept := interned.m.get("10.77.66.55")
	kernel, kernelKept := interned.m.get("linux-unique-attrs-test")
	key, keyKept := interned.m.get("unique.network.ip-address")
	interned.mu.Unlock()
	if ipKept {
		t.Error("a unique.* attribute value was added to the intern table")
	}
	if !kernelKept || !sameStorage(stored.Attributes.Value("kernel.name"), kernel) {
		t.Error("an ordinary attribute value is not interned")
	}
	if !keyKept {
		t.Error("a unique.* attribute key is not interned")
	}
	for k := range stored.Attributes.All() {
		if k == "unique.network.ip-address" && !sameStorage(k, key) {
			t.Error("the stored unique.* key is not the interned copy")
		}
	}
	if !sameStorage(stored.Attributes.Value("unique.hostname"), stored.Name) {
		t.Error("unique.hostname does not share the copy of the node's name the table holds")
	}
	if stored.Attributes.Value("unique.network.ip-address") != "10.77.66.55" {
		t.Errorf("unique.network.ip-address = %q", stored.Attributes.Value("unique.network.ip-address"))
	}
}
