package feasible

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// volumeNode is a mock node with the given host volumes (name -> read-only).
func volumeNode(name string, vols map[string]bool) *structs.Node {
	n := MockNode()
	n.Name = name
	n.NodeResources.HostVolumes = map[string]*structs.ClientHostVolumeConfig{}
	for v, ro := range vols {
		n.NodeResources.HostVolumes[v] = &structs.ClientHostVolumeConfig{Name: v, Path: "/srv/" + v, ReadOnly: ro}
	}
	MockComputeClass(n)
	return n
}

// selectOne places one allocation named allocName of job's first group
// on nodes and returns the chosen node's name ("" for none) and metrics.
func selectOne(t *testing.T, job *structs.Job, allocName string, nodes ...*structs.Node) (string, *structs.AllocMetric) {
	t.Helper()
	f := newFixture(1, nodes)
	s := NewGenericStack(false, f.ctx)
	s.SetNodes(nodes)
	s.SetJob(job)
	option := s.Select(job.TaskGroups[0], &SelectOptions{AllocName: allocName})
	m := f.ctx.Metrics()
	if option == nil {
		return "", m
	}
	return option.Node.Name, m
}

func TestHostVolumeChecker(t *testing.T) {
	cases := []struct {
		name       string
		req        structs.VolumeRequest
		vols       map[string]bool
		wantFit    bool
		wantReason string
	}{
		{"a node with the volume passes", structs.VolumeRequest{Source: "data"}, map[string]bool{"data": false}, true, ""},
		{"a node without the volume is filtered and told which", structs.VolumeRequest{Source: "data"}, map[string]bool{"logs": false}, false, `missing host volume "data"`},
		{"a node with no volumes at all is filtered", structs.VolumeRequest{Source: "data"}, nil, false, `missing host volume "data"`},
		{"a read-only volume refuses a group that writes", structs.VolumeRequest{Source: "data"}, map[string]bool{"data": true}, false,
			`host volume "data" is read-only on the node (the group's volume "vol" needs read_only = true to use it)`},
		{"a read-only volume takes a read-only request", structs.VolumeRequest{Source: "data", ReadOnly: true}, map[string]bool{"data": true}, true, ""},
		{"per_alloc asks for the volume of the allocation's index", structs.VolumeRequest{Source: "data", PerAlloc: true}, map[string]bool{"data[3]": false}, true, ""},
		{"per_alloc refuses a node with another index's volume", structs.VolumeRequest{Source: "data", PerAlloc: true}, map[string]bool{"data[0]": false, "data": false}, false, `missing host volume "data[3]"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := simpleJob(4)
			req := tc.req
			req.Name, req.Type = "vol", structs.VolumeTypeHost
			job.TaskGroups[0].Volumes = map[string]*structs.VolumeRequest{"vol": &req}
			got, m := selectOne(t, job, structs.AllocName(job.ID, job.TaskGroups[0].Name, 3), volumeNode("n1", tc.vols))
			if (got != "") != tc.wantFit {
				t.Fatalf("placed on %q, want fit %v (filtered %+v)", got, tc.wantFit, m.ConstraintFiltered)
			}
			if tc.wantReason != "" && (m.NodesFiltered != 1 || m.ConstraintFiltered[tc.wantReason] != 1) {
				t.Fatalf("want the node filtered by %q, got %+v", tc.wantReason, m.ConstraintFiltered)
			}
		})
	}
}

// The per_alloc verdict is not cached for the node across placements:
// each allocation gets the node that has its own volume.
func TestPerAllocVolumesPlaceEachAllocationOnItsNode(t *testing.T) {
	job := simpleJob(2)
	job.TaskGroups[0].Volumes = map[string]*structs.VolumeRequest{"vol": {Name: "vol", Type: structs.VolumeTypeHost, Source: "db", PerAlloc: true}}
	a := volumeNode("a", map[string]bool{"db[0]": false})
	b := volumeNode("b", map[string]bool{"db[1]": false})
	f := newFixture(1, []*structs.Node{a, b})
	s := NewGenericStack(false, f.ctx)
	s.SetNodes([]*structs.Node{a, b})
	s.SetJob(job)
	for i, want := range []string{"a", "b", "a"} {
		idx := i % 2
		o := s.Select(job.TaskGroups[0], &SelectOptions{AllocName: structs.AllocName(job.ID, job.TaskGroups[0].Name, idx)})
		if o == nil || o.Node.Name != want {
			t.Fatalf("placement %d (index %d): got %v, want node %s", i, idx, o, want)
		}
	}
}

func TestHostNetworkChecker(t *testing.T) {
	withNet := func(name, alias, addr string) *structs.Node {
		n := MockNode()
		n.Name = name
		if alias != "" {
			n.NodeResources.NodeNetworks = append(n.NodeResources.NodeNetworks, &structs.NodeNetworkResource{
				Mode: "host", Device: "eth1",
				Addresses: []structs.NodeNetworkAddress{{Family: "ipv4", Alias: alias, Address: addr, ReservedPorts: "9000"}},
			})
		}
		MockComputeClass(n)
		return n
	}
	job := func(static int) *structs.Job {
		j := simpleJob(1)
		nr := &structs.NetworkResource{Mode: "host", DynamicPorts: []structs.Port{{Label: "http", HostNetwork: "private"}}}
		if static > 0 {
			nr.ReservedPorts = []structs.Port{{Label: "admin", Value: static, HostNetwork: "private"}}
		}
		j.TaskGroups[0].Networks = structs.Networks{nr}
		return j
	}

	t.Run("a node without the network is filtered and told which", func(t *testing.T) {
		got, m := selectOne(t, job(0), "", withNet("plain", "", ""))
		if got != "" || m.ConstraintFiltered[`missing host network "private"`] != 1 {
			t.Fatalf("placed on %q, filtered %+v", got, m.ConstraintFiltered)
		}
	})
	t.Run("only the node with the network is chosen, and the port gets its address", func(t *testing.T) {
		nodes := []*structs.Node{withNet("plain1", "", ""), withNet("private", "private", "10.99.0.7"), withNet("plain2", "", "")}
		f := newFixture(1, nodes)
		s := NewGenericStack(false, f.ctx)
		s.SetNodes(nodes)
		j := job(0)
		s.SetJob(j)
		o := s.Select(j.TaskGroups[0], nil)
		if o == nil || o.Node.Name != "private" {
			t.Fatalf("got %v, want node private (metrics %+v)", o, f.ctx.Metrics())
		}
		m, ok := o.Resources.Shared.Ports.Get("http")
		if !ok || m.HostIP != "10.99.0.7" {
			t.Fatalf("port http = %+v, want host IP 10.99.0.7", m)
		}
	})
	t.Run("a static port reserved on the network is refused there", func(t *testing.T) {
		got, m := selectOne(t, job(9000), "", withNet("private", "private", "10.99.0.7"))
		if got != "" || m.NodesExhausted != 1 {
			t.Fatalf("placed on %q, want the node exhausted on its reserved port (metrics %+v)", got, m)
		}
	})
}
