package structs

import (
	"errors"
	"math/rand"
	"testing"
)

// AssignPorts says why it failed with a typed error, so the scheduler can
// tell a full node (its own exhaustion dimension) from a port conflict
// without reading the text.
func TestAssignPortsFailuresAreTyped(t *testing.T) {
	node := testNode()
	node.NodeResources.MinDynamicPort, node.NodeResources.MaxDynamicPort = 20000, 20001
	idx, err := NewNetworkIndex(node)
	if err != nil {
		t.Fatal(err)
	}
	idx.AddAllocs([]*Allocation{
		testAlloc("x", 1, 1, 20000, AllocDesiredStatusRun, AllocClientStatusRunning),
		testAlloc("y", 1, 1, 20001, AllocDesiredStatusRun, AllocClientStatusRunning),
	})
	rng := rand.New(rand.NewSource(1))

	_, err = idx.AssignPorts(&NetworkResource{DynamicPorts: []Port{{Label: "http"}}}, "a", rng)
	var full *DynamicPortsExhaustedError
	if !errors.As(err, &full) || full.MinPort != 20000 || full.MaxPort != 20001 {
		t.Fatalf("a full dynamic range: got %T %v", err, err)
	}
	if err.Error() != "dynamic port selection failed: no free port in 20000-20001" {
		t.Fatalf("text: %q", err)
	}

	_, err = idx.AssignPorts(&NetworkResource{ReservedPorts: []Port{{Label: "admin", Value: 20001}}}, "a", rng)
	var taken *ReservedPortCollisionError
	if !errors.As(err, &taken) || taken.Label != "admin" || taken.Port != 20001 || errors.As(err, &full) {
		t.Fatalf("a taken static port: got %T %v", err, err)
	}
	if err.Error() != "reserved port collision admin=20001" {
		t.Fatalf("text: %q", err)
	}
}
