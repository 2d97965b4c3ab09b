//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
)

// attrJob is a batch job constrained on the client's kernel attribute.
func attrJob(id, kernel string) string {
	return fmt.Sprintf(`
job %q {
  type = "batch"
  constraint {
    attribute = "${attr.kernel.name}"
    value     = %q
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`, id, kernel)
}

// TestNodeAttributesReachTheAPIAndTheScheduler: a real client's
// fingerprint reaches Nomad's api.Node and api.NodeListStub as a map, a
// list filter selects nodes by attribute, and the scheduler places a job
// constrained on an attribute the node has and tells why it places none
// of one constrained on a value it has not.
func TestNodeAttributesReachTheAPIAndTheScheduler(t *testing.T) {
	a := newAgent(t, agentSpec{name: "attrs", extra: singleMachine})
	nodeID := a.waitOneReadyNode(t)

	// Nomad's own client reads the node and the list.
	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: a.httpAddr()})
	if err != nil {
		t.Fatal(err)
	}
	node, _, err := nc.Nodes().Info(nodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"kernel.name", "driver.raw_exec", "unique.hostname", "cpu.numcores", "nomad.version"} {
		if node.Attributes[k] == "" {
			t.Errorf("node attribute %s is missing; attributes: %v", k, node.Attributes)
		}
	}
	if node.Attributes["kernel.name"] != "linux" {
		t.Fatalf("kernel.name = %q", node.Attributes["kernel.name"])
	}

	for _, tc := range []struct {
		filter string
		want   int
	}{
		{`Attributes["kernel.name"] == "linux"`, 1},
		{`Attributes["kernel.name"] == "windows"`, 0},
		{`"driver.raw_exec" in Attributes`, 1},
		{`Attributes["no.such.attribute"] == "x"`, 0},
	} {
		nodes, _, err := nc.Nodes().List(&nomadapi.QueryOptions{Filter: tc.filter})
		if err != nil {
			t.Fatalf("filter %s: %v", tc.filter, err)
		}
		if len(nodes) != tc.want {
			t.Errorf("filter %s: %d nodes, want %d", tc.filter, len(nodes), tc.want)
		}
		if len(nodes) == 1 && nodes[0].Attributes["kernel.name"] != "linux" {
			t.Errorf("filter %s: the listed node's attributes are %v", tc.filter, nodes[0].Attributes)
		}
	}

	registerJob(t, a, attrJob("on-linux", "linux"), 30*time.Second)
	waitFor(t, 60*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(a, "on-linux")
		if err != nil || len(allocs) != 1 || allocs[0].ClientStatus != "complete" || allocs[0].NodeID != nodeID {
			return false, fmt.Sprintf("allocs %s (%v)", describeAllocs(allocs), err)
		}
		return true, ""
	})

	registerJob(t, a, attrJob("on-windows", "windows"), 30*time.Second)
	waitFor(t, 60*time.Second, func() (bool, string) {
		evals, _, err := a.api().Jobs().Evaluations("on-windows", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if m := e.FailedTGAllocs["g"]; m != nil {
				if n := m.ConstraintFiltered["${attr.kernel.name} = windows"]; n != 1 {
					t.Fatalf("failed placement metrics: %+v", m)
				}
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d evals, none with a failed placement", len(evals))
	})
	if allocs, err := jobAllocs(a, "on-windows"); err != nil || len(allocs) != 0 {
		t.Fatalf("a job constrained to windows was placed on linux: %s (%v)", describeAllocs(allocs), err)
	}
}
