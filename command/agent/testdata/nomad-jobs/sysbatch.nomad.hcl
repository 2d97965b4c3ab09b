# A sysbatch job: run once on every eligible node, e.g. to prune images.
job "prune" {
  datacenters = ["dc1"]
  type        = "sysbatch"

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "prune" {
    task "prune" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo pruned on ${node.unique.name}"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
