package fuzzseed_test

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/fuzzseed"
	"github.com/drover-sched/drover/structs"
)

// Node attributes keep their state in unexported fields; Diff compares
// them as the map they are sent as, so equal sets held in different
// memory are equal, nil and empty are equal as for a map, and a changed
// value is named by its key.
func TestDiffComparesNodeAttributesAsAMap(t *testing.T) {
	m := map[string]string{"kernel.name": "linux", "cpu.arch": "amd64"}
	a := &structs.Node{ID: "n", Attributes: structs.NewAttributes(m)}
	b := &structs.Node{ID: "n", Attributes: structs.NewAttributes(map[string]string{"cpu.arch": "amd64", "kernel.name": "linux"})}
	if d := fuzzseed.Diff(a, b); d != "" {
		t.Fatalf("equal attributes differ: %s", d)
	}
	if d := fuzzseed.Diff(&structs.Node{}, &structs.Node{Attributes: structs.AttributesOf()}); d != "" {
		t.Fatalf("nil and empty attributes differ: %s", d)
	}
	b.Attributes = b.Attributes.With("kernel.name", "darwin")
	if d := fuzzseed.Diff(a, b); !strings.Contains(d, `.Attributes["kernel.name"]`) || !strings.Contains(d, "darwin") {
		t.Fatalf("a changed attribute is reported as %q", d)
	}
}

// Attribute values are compared byte for byte: values that are not UTF-8,
// which msgpack carries as they are, differ when their bytes do.
func TestDiffTellsAttributeValuesThatAreNotUTF8Apart(t *testing.T) {
	a := &structs.Node{Attributes: structs.AttributesOf("k", "\xff")}
	b := &structs.Node{Attributes: structs.AttributesOf("k", "\xfe")}
	if d := fuzzseed.Diff(a, b); !strings.Contains(d, `.Attributes["k"]`) {
		t.Fatalf("values \\xff and \\xfe reported as %q", d)
	}
}

// A channel, exported or a type's own unexported state, is the same when
// it is the same channel (or both are nil).
func TestDiffComparesChannelsByIdentity(t *testing.T) {
	type holder struct {
		C      chan int
		closed <-chan struct{}
	}
	c, done := make(chan int), make(chan struct{})
	if d := fuzzseed.Diff(holder{}, holder{}); d != "" {
		t.Errorf("two zero values differ: %s", d)
	}
	if d := fuzzseed.Diff(holder{C: c, closed: done}, holder{C: c, closed: done}); d != "" {
		t.Errorf("the same channels differ: %s", d)
	}
	if d := fuzzseed.Diff(holder{closed: done}, holder{}); d == "" {
		t.Error("a channel and nil are reported equal")
	}
	if d := fuzzseed.Diff(holder{C: c}, holder{C: make(chan int)}); d == "" {
		t.Error("two different channels are reported equal")
	}
}
