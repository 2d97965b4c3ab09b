package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	nomadapi "github.com/hashicorp/nomad/api"
)

const distinctHostsHCL = `
job "spread" {
  datacenters = ["dc1"]
  group "web" {
    count = 2
    constraint {
      distinct_hosts = true
    }
    constraint {
      distinct_property = "${node.datacenter}"
    }
    task "app" {
      driver = "mock_driver"
      config {
        run_for = "1h"
      }
    }
  }
}
`

// TestNomadClientDistinctHosts parses `distinct_hosts = true` through
// /v1/jobs/parse with Nomad's client and gets what Nomad's own parser
// gives (RTarget "true"), registers the job, and reads the constraints
// back the same. On the dev agent's one node the constraint holds: one of
// the two allocations is placed, and the other is refused by
// distinct_hosts and distinct_property on that node.
func TestNomadClientDistinctHosts(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	job, err := c.Jobs().ParseHCL(distinctHostsHCL, true)
	if err != nil {
		t.Fatalf("ParseHCL: %v", err)
	}
	want := []*nomadapi.Constraint{
		{Operand: "distinct_hosts", RTarget: "true"},
		{LTarget: "${node.datacenter}", Operand: "distinct_property"},
	}
	check := func(what string, got []*nomadapi.Constraint) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: constraints %+v", what, got)
		}
		for i := range want {
			if diff := cmp.Diff(*want[i], *got[i]); diff != "" {
				t.Fatalf("%s: constraint %d differs from Nomad's parser's (-nomad +drover):\n%s", what, i, diff)
			}
		}
	}
	check("parsed", job.TaskGroups[0].Constraints)
	reg, _, err := c.Jobs().Register(job, nil)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	stored, _, err := c.Jobs().Info("spread", nil)
	if err != nil {
		t.Fatal(err)
	}
	check("read back", stored.TaskGroups[0].Constraints)

	nomadJobAllocs(t, c, "spread", 1, "one alloc placed", clientStatus("running"))
	var eval *nomadapi.Evaluation
	waitUntil(t, "the register eval to finish with one alloc unplaced", func() bool {
		eval, _, err = c.Evaluations().Info(reg.EvalID, nil)
		return err == nil && eval.Status == "complete" && eval.FailedTGAllocs["web"] != nil
	})
	m := eval.FailedTGAllocs["web"]
	if m.ConstraintFiltered["distinct_hosts"]+m.ConstraintFiltered["distinct_property"] != 1 || m.NodesEvaluated != 1 {
		t.Fatalf("the unplaced alloc should be refused by a distinct constraint on the one node: %+v", m)
	}
	if allocs, _, _ := c.Jobs().Allocations("spread", true, nil); len(allocs) != 1 {
		t.Fatalf("%d allocs on one node with distinct_hosts", len(allocs))
	}
}
