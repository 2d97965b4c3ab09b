# A counter that outlives its allocations: each start reads the count the
# previous allocation left in the host volume "counter" and adds one.
# The client needs, in its agent config:
#
#   client {
#     host_volume "counter" {
#       path = "/srv/counter"   # must exist, writable by nobody (the exec default user)
#     }
#   }
job "counter" {
  group "count" {
    volume "state" {
      type   = "host"
      source = "counter"
    }

    task "bump" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "n=$(cat /state/n 2>/dev/null || echo 0); echo $((n + 1)) > /state/n; echo count=$((n + 1)); exec sleep 3600"]
      }

      volume_mount {
        volume      = "state"
        destination = "/state"
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
