# Native service discovery: "web" registers its HTTP port in Drover's own
# service catalog (provider = "nomad"), and "front" renders the live
# addresses of web's instances with nomadService, re-rendered in place as
# they come and go.
#
#   drover job run examples/services.hcl
#   drover service list
#   drover service info web
#   drover alloc fs <front alloc> proxy/local/backends.txt
job "services" {
  type = "service"

  group "web" {
    count = 2

    network {
      port "http" {}
    }

    service {
      name     = "web"
      provider = "nomad"
      port     = "http"
      tags     = ["http"]
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

  group "front" {
    task "proxy" {
      driver = "raw_exec"

      config {
        command = "/bin/sleep"
        args    = ["infinity"]
      }

      template {
        destination = "local/backends.txt"
        change_mode = "noop"
        data        = <<EOT
{{ range nomadService "web" }}{{ .Address }}:{{ .Port }}
{{ end }}
EOT
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
