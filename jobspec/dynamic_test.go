package jobspec

import (
	"testing"

	"github.com/drover-sched/drover/api"
)

func TestDynamicBlocksExpand(t *testing.T) {
	job := mustParse(t, `
locals {
  groups = {
    api = 2
    web = 1
  }
  ports   = ["http", "metrics"]
  mounts  = ["/a", "/b"]
  allowed = ["linux", "freebsd"]
}

job "j" {
  dynamic "constraint" {
    for_each = local.allowed
    content {
      attribute = "${attr.kernel.name}"
      value     = constraint.value
    }
  }

  dynamic "group" {
    for_each = local.groups
    iterator = g
    labels   = [g.key]

    content {
      count = g.value

      network {
        dynamic "port" {
          for_each = local.ports
          labels   = [port.value]
          content {}
        }
      }

      task "main" {
        driver = "docker"

        meta {
          group = g.key
        }

        config {
          image = "${g.key}:latest"

          dynamic "mount" {
            for_each = local.mounts
            content {
              target = mount.value
              owner  = g.key
            }
          }
        }
      }
    }
  }
}`)

	assertEqual(t, []*api.Constraint{
		{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="},
		{LTarget: "${attr.kernel.name}", RTarget: "freebsd", Operand: "="},
	}, job.Constraints)

	if len(job.TaskGroups) != 2 {
		t.Fatalf("got %d groups, want 2", len(job.TaskGroups))
	}
	for _, tc := range []struct {
		name  string
		count int
	}{{"api", 2}, {"web", 1}} {
		g := job.LookupTaskGroup(tc.name)
		if g == nil {
			t.Fatalf("no group %q", tc.name)
		}
		if *g.Count != tc.count {
			t.Errorf("group %s count = %d, want %d", tc.name, *g.Count, tc.count)
		}
		assertEqual(t, []api.Port{{Label: "http"}, {Label: "metrics"}}, g.Networks[0].DynamicPorts)
		task := g.Tasks[0]
		assertEqual(t, map[string]string{"group": tc.name}, task.Meta)
		assertEqual(t, map[string]interface{}{
			"image": tc.name + ":latest",
			"mount": []map[string]interface{}{
				{"target": "/a", "owner": tc.name},
				{"target": "/b", "owner": tc.name},
			},
		}, task.Config)
	}
}

func TestDynamicBlockErrorsAreReported(t *testing.T) {
	_, err := parseString(t, "job.hcl", `
job "j" {
  dynamic "nonsense" {
    for_each = [1]
    content {}
  }
}`)
	assertErrorContains(t, err, `job.hcl:3,11-21: Unsupported block type; Blocks of type "nonsense" are not expected here.`)
}
