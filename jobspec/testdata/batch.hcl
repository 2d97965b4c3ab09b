# A batch job that runs a script to completion, with a prestart task and a
# template.
job "report" {
  type        = "batch"
  datacenters = ["dc1"]

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  group "report" {
    count = 3

    reschedule {
      attempts  = 0
      unlimited = false
    }

    restart {
      attempts = 1
      mode     = "fail"
    }

    task "fetch" {
      driver = "raw_exec"

      lifecycle {
        hook = "prestart"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "echo fetching into $NOMAD_ALLOC_DIR"]
      }
    }

    task "run" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["${NOMAD_TASK_DIR}/run.sh", "${NOMAD_ALLOC_INDEX}"]
      }

      template {
        destination = "local/run.sh"
        perms       = "0755"
        data        = <<-EOT
          #!/bin/sh
          echo "shard $1 of {{ env "NOMAD_GROUP_NAME" }} on ${attr.unique.hostname}"
        EOT
      }

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
