package feasible

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// modeNode is a mock node that advertises the given group network modes.
func modeNode(name string, modes ...string) *structs.Node {
	n := MockNode()
	n.Name = name
	for _, m := range modes {
		n.NodeResources.Networks = append(n.NodeResources.Networks, &structs.NetworkResource{Mode: m})
	}
	MockComputeClass(n)
	return n
}

func TestNetworkModeChecker(t *testing.T) {
	cases := []struct {
		name       string
		mode       string
		modes      []string
		wantFit    bool
		wantReason string
	}{
		{"host mode needs nothing", "host", nil, true, ""},
		{"bridge needs a node that advertises it", "bridge", []string{"bridge", "none"}, true, ""},
		{"a node without CNI is filtered for bridge", "bridge", nil, false, `missing network mode "bridge"`},
		{"none is a mode of its own", "none", []string{"bridge"}, false, `missing network mode "none"`},
		{"cni/<name> needs that network", "cni/overlay", []string{"bridge", "cni/overlay"}, true, ""},
		{"another CNI network does not do", "cni/overlay", []string{"cni/other"}, false, `missing CNI network "overlay"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job := simpleJob(1)
			job.TaskGroups[0].Networks = []*structs.NetworkResource{{Mode: tc.mode}}
			got, m := selectOne(t, job, structs.AllocName(job.ID, job.TaskGroups[0].Name, 0), modeNode("n1", tc.modes...))
			if (got != "") != tc.wantFit {
				t.Fatalf("placed on %q, want fit %v (filtered %+v)", got, tc.wantFit, m.ConstraintFiltered)
			}
			if tc.wantReason != "" && (m.NodesFiltered != 1 || m.ConstraintFiltered[tc.wantReason] != 1) {
				t.Fatalf("want the node filtered by %q, got %+v", tc.wantReason, m.ConstraintFiltered)
			}
		})
	}
}

// Of two nodes only the one that can give bridge mode gets the group.
func TestABridgeGroupGoesToTheNodeWithCNI(t *testing.T) {
	job := simpleJob(1)
	job.TaskGroups[0].Networks = []*structs.NetworkResource{{Mode: "bridge"}}
	got, _ := selectOne(t, job, structs.AllocName(job.ID, job.TaskGroups[0].Name, 0), modeNode("plain"), modeNode("cni", "bridge"))
	if got != "cni" {
		t.Fatalf("placed on %q, want the node with bridge mode", got)
	}
}
