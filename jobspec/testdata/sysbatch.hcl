# A sysbatch job: run once on every Linux node in the pool.
job "inventory" {
  type      = "sysbatch"
  node_pool = "all"

  constraint {
    attribute = "${attr.kernel.name}"
    operator  = "="
    value     = "linux"
  }

  group "inventory" {
    task "collect" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/uname"
        args    = ["-a"]
      }

      env {
        NODE = "${node.unique.name}"
      }
    }
  }
}
