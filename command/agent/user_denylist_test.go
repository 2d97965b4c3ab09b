package agent

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/command/agent/config"
)

const rootTaskHCL = `
job "as-root" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "mock_driver"
      user   = "root"
      config {
        run_for = "1h"
      }
    }
  }
}
`

// A node whose client denies root for the task's driver is refused at
// placement: `job plan` and the register eval both say which user and
// which setting, and nothing is placed.
func TestUserDenylistRefusesTheNodeAtPlacement(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, func(c *config.Config) {
		c.Client.Options["user.checked_drivers"] = "mock_driver"
	})
	c := nomadClient(t, a)
	job, err := c.Jobs().ParseHCL(rootTaskHCL, true)
	if err != nil {
		t.Fatal(err)
	}
	const reason = `user "root" is in the node's user.denylist for driver mock_driver`

	plan, _, err := c.Jobs().Plan(job, true, nil)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if m := plan.FailedTGAllocs["g"]; m == nil || m.ConstraintFiltered[reason] != 1 {
		t.Fatalf("plan must refuse the one node with %q, got %+v", reason, plan.FailedTGAllocs)
	}

	reg, _, err := c.Jobs().Register(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the register eval to finish with the group unplaced", func() bool {
		eval, _, err := c.Evaluations().Info(reg.EvalID, nil)
		return err == nil && eval.Status == "complete" && eval.FailedTGAllocs["g"] != nil &&
			eval.FailedTGAllocs["g"].ConstraintFiltered[reason] == 1
	})
	allocs, _, err := c.Jobs().Allocations("as-root", false, nil)
	if err != nil || len(allocs) != 0 {
		t.Fatalf("nothing may be placed: %d allocs, %v", len(allocs), err)
	}

	// The node says so in its attributes, for `node status -verbose`.
	node, _, err := c.Nodes().Info(a.NodeID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(node.Attributes["user.denylist"], "root") || !strings.Contains(node.Attributes["user.checked_drivers"], "mock_driver") {
		t.Fatalf("node attributes %v", node.Attributes)
	}
}
