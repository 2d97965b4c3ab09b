# A system job, one alloc per node: a node agent such as an exporter.
job "node-agent" {
  datacenters = ["dc1"]
  type        = "system"
  priority    = 75

  update {
    max_parallel = 1
    stagger      = "10s"
  }

  group "agent" {
    network {
      port "metrics" {}
    }

    service {
      name     = "node-agent"
      port     = "metrics"
      provider = "nomad"

      check {
        type     = "tcp"
        interval = "15s"
        timeout  = "3s"
      }
    }

    task "agent" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo agent listening on $NOMAD_PORT_metrics; exec sleep 3600"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
