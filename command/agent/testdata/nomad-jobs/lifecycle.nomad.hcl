# A service whose group uses task lifecycle hooks as Nomad jobs do: an init
# task prepares the shared alloc dir before the main task starts, a sidecar
# runs alongside it, and a poststop task cleans up after the alloc stops.
job "with-init" {
  datacenters = ["dc1"]

  group "app" {
    task "init" {
      lifecycle {
        hook    = "prestart"
        sidecar = false
      }
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo ready > ${NOMAD_ALLOC_DIR}/state"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }

    task "sidecar" {
      lifecycle {
        hook    = "prestart"
        sidecar = true
      }
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exec sleep 3600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }

    task "main" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cat ${NOMAD_ALLOC_DIR}/state; exec sleep 3600"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }

    task "cleanup" {
      lifecycle {
        hook = "poststop"
      }
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo cleaned up"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
