package structs

import (
	"math/rand"
	"strings"
	"testing"
)

func testNode() *Node {
	n := &Node{
		ID: "node-1", SecretID: "s", Name: "n1", Datacenter: "dc1", Status: NodeStatusReady,
		Attributes: NewAttributes(map[string]string{"unique.network.ip-address": "10.0.0.1"}),
		NodeResources: &NodeResources{
			Cpu: NodeCpuResources{CpuShares: 4000}, Memory: NodeMemoryResources{MemoryMB: 8192},
			Disk: NodeDiskResources{DiskMB: 100000},
		},
		ReservedResources: &NodeReservedResources{
			Cpu: NodeReservedCpuResources{CpuShares: 100}, Memory: NodeReservedMemoryResources{MemoryMB: 256},
			Networks: NodeReservedNetworkResources{ReservedHostPorts: "22"},
		},
	}
	n.Canonicalize()
	return n
}

func testAlloc(id string, cpu, mem int64, port int, desired, client string) *Allocation {
	a := &Allocation{
		ID: id, NodeID: "node-1", DesiredStatus: desired, ClientStatus: client,
		AllocatedResources: &AllocatedResources{
			Tasks: map[string]*AllocatedTaskResources{"web": {Cpu: AllocatedCpuResources{CpuShares: cpu}, Memory: AllocatedMemoryResources{MemoryMB: mem}}},
		},
	}
	if port != 0 {
		a.AllocatedResources.Shared.Ports = AllocatedPorts{{Label: "http", Value: port}}
	}
	return a
}

func TestAllocsFitCountsStoppingAllocsUntilClientTerminal(t *testing.T) {
	node := testNode()
	stopping := testAlloc("old", 1000, 6000, 8080, AllocDesiredStatusStop, AllocClientStatusRunning)
	newer := testAlloc("new", 1000, 6000, 0, AllocDesiredStatusRun, AllocClientStatusPending)

	fit, dim, _, err := AllocsFit(node, []*Allocation{stopping, newer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fit || dim != "memory" {
		t.Fatalf("a stopping but running alloc must keep its memory: fit=%v dim=%q", fit, dim)
	}

	samePort := testAlloc("new", 100, 100, 8080, AllocDesiredStatusRun, AllocClientStatusPending)
	fit, dim, _, _ = AllocsFit(node, []*Allocation{stopping, samePort}, nil)
	if fit || !strings.HasPrefix(dim, "network:") {
		t.Fatalf("a stopping but running alloc must keep its port: fit=%v dim=%q", fit, dim)
	}

	stopped := stopping.Copy()
	stopped.ClientStatus = AllocClientStatusComplete
	for _, a := range []*Allocation{newer, samePort} {
		if fit, dim, _, _ := AllocsFit(node, []*Allocation{stopped, a}, nil); !fit {
			t.Fatalf("a client-complete alloc must free its resources, got exhausted %q", dim)
		}
	}
	lost := stopping.Copy()
	lost.ClientStatus = AllocClientStatusLost
	if fit, dim, _, _ := AllocsFit(node, []*Allocation{lost, samePort}, nil); !fit {
		t.Fatalf("a lost alloc must free its resources, got exhausted %q", dim)
	}
}

func TestAllocsFitHonoursReservations(t *testing.T) {
	node := testNode()
	// 8192 - 256 reserved = 7936 MB usable.
	if fit, _, _, _ := AllocsFit(node, []*Allocation{testAlloc("a", 100, 7936, 0, AllocDesiredStatusRun, AllocClientStatusRunning)}, nil); !fit {
		t.Fatal("exactly the unreserved memory must fit")
	}
	if fit, dim, _, _ := AllocsFit(node, []*Allocation{testAlloc("a", 100, 7937, 0, AllocDesiredStatusRun, AllocClientStatusRunning)}, nil); fit || dim != "memory" {
		t.Fatalf("one MB over must not fit, got fit=%v dim=%q", fit, dim)
	}
	if fit, dim, _, _ := AllocsFit(node, []*Allocation{testAlloc("a", 100, 10, 22, AllocDesiredStatusRun, AllocClientStatusRunning)}, nil); fit {
		t.Fatalf("a reserved host port must not be granted (dim %q)", dim)
	}
}

func TestAssignPortsIsDeterministicAndAvoidsUsedPorts(t *testing.T) {
	node := testNode()
	node.NodeResources.MinDynamicPort, node.NodeResources.MaxDynamicPort = 20000, 20009
	ask := &NetworkResource{ReservedPorts: []Port{{Label: "admin", Value: 9000}}, DynamicPorts: []Port{{Label: "http"}, {Label: "grpc", To: -1}}}

	pick := func(seed int64) AllocatedPorts {
		idx, err := NewNetworkIndex(node)
		if err != nil {
			t.Fatal(err)
		}
		idx.AddAllocs([]*Allocation{testAlloc("x", 1, 1, 20003, AllocDesiredStatusRun, AllocClientStatusRunning)})
		ports, err := idx.AssignPorts(ask, "a", rand.New(rand.NewSource(seed)))
		if err != nil {
			t.Fatal(err)
		}
		return ports
	}
	a, b := pick(7), pick(7)
	if !DeepEqual(a, b) {
		t.Fatalf("the same seed must choose the same ports: %v vs %v", a, b)
	}
	seen := map[int]bool{}
	for _, p := range a {
		if p.Value == 20003 {
			t.Fatalf("port %d is used by another alloc", p.Value)
		}
		if seen[p.Value] {
			t.Fatalf("port %d granted twice", p.Value)
		}
		seen[p.Value] = true
		if p.Label == "grpc" && p.To != p.Value {
			t.Fatalf("to = -1 must map to the host port, got to=%d value=%d", p.To, p.Value)
		}
	}
	if m, _ := a.Get("admin"); m.Value != 9000 {
		t.Fatalf("static port must be kept, got %d", m.Value)
	}

	// A full range reports the failure instead of reusing a port.
	idx, _ := NewNetworkIndex(node)
	var allocs []*Allocation
	for p := 20000; p <= 20009; p++ {
		allocs = append(allocs, testAlloc(itoa(p), 1, 1, p, AllocDesiredStatusRun, AllocClientStatusRunning))
	}
	idx.AddAllocs(allocs)
	if _, err := idx.AssignPorts(&NetworkResource{DynamicPorts: []Port{{Label: "http"}}}, "b", rand.New(rand.NewSource(1))); err == nil {
		t.Fatal("an exhausted dynamic range must fail")
	}
}

func TestParsePortRanges(t *testing.T) {
	got, err := ParsePortRanges("22, 80,8000-8002")
	if err != nil {
		t.Fatal(err)
	}
	if !DeepEqual(got, []int{22, 80, 8000, 8001, 8002}) {
		t.Fatalf("got %v", got)
	}
	for _, bad := range []string{"x", "10-5", "0", "70000", "1-"} {
		if _, err := ParsePortRanges(bad); err == nil {
			t.Errorf("%q must be refused", bad)
		}
	}
}

func TestScoreFitPrefersFullerNodesForBinpack(t *testing.T) {
	node := testNode()
	empty := ScoreFitBinPack(node, ComparableResources{CPU: 100, MemoryMB: 100})
	full := ScoreFitBinPack(node, ComparableResources{CPU: 3800, MemoryMB: 7800})
	if full <= empty {
		t.Fatalf("binpack must score a fuller node higher: full %v empty %v", full, empty)
	}
	if ScoreFitSpread(node, ComparableResources{CPU: 100, MemoryMB: 100}) <= ScoreFitSpread(node, ComparableResources{CPU: 3800, MemoryMB: 7800}) {
		t.Fatal("spread must score an emptier node higher")
	}
}
