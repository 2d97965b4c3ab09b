# A minimal service: one instance of Python's built-in HTTP server on a
# dynamic port, run with raw_exec.
#
#   drover job run examples/web.hcl
job "web" {
  type = "service"

  group "web" {
    count = 1

    network {
      port "http" {}
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
