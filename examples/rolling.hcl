# A service rolled out by deployments: four instances of Python's HTTP
# server, each serving /version, with an http check that feeds the
# deployment's health. A new version replaces one instance at a time
# (max_parallel), each only once the last new one has passed its check
# for min_healthy_time; a version that never turns healthy fails its
# deployment and auto_revert runs the last good version again. With
# canary = 1, a new version first runs one canary beside the old
# instances and waits for `drover deployment promote`.
#
#   drover job run examples/rolling.hcl
#   drover job run -var version=v2 examples/rolling.hcl
#   drover job run -var version=v3 -var canary=1 examples/rolling.hcl
variable "version" {
  type    = string
  default = "v1"
}

variable "canary" {
  type    = number
  default = 0
}

job "rolling" {
  type = "service"

  update {
    max_parallel      = 1
    canary            = var.canary
    health_check      = "checks"
    min_healthy_time  = "2s"
    healthy_deadline  = "30s"
    progress_deadline = "5m"
    auto_revert       = true
  }

  group "web" {
    count = 4

    network {
      port "http" {}
    }

    service {
      name     = "rolling"
      port     = "http"
      provider = "nomad"

      check {
        name     = "version"
        type     = "http"
        path     = "/version"
        interval = "2s"
        timeout  = "1s"
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args = ["-c", join(" ", [
          "mkdir -p local/www && printf %s ${var.version} > local/www/version &&",
          "exec /usr/bin/python3 -m http.server ${NOMAD_PORT_http} --directory local/www",
        ])]
      }

      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
