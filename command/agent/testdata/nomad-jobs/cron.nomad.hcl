# A periodic batch job, the way a nightly cleanup is usually written.
job "cleanup" {
  datacenters = ["dc1"]
  type        = "batch"

  periodic {
    crons            = ["0 3 * * *"]
    prohibit_overlap = true
    time_zone        = "UTC"
  }

  group "cleanup" {
    restart {
      attempts = 1
      mode     = "fail"
    }

    task "cleanup" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo cleaning up"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
