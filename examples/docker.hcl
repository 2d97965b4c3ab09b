# A service in a container: busybox's httpd serving the task's local/
# directory on container port 8080, published on a dynamic host port.
# The image must be on the node (docker import, docker load or a registry
# the daemon can reach); see the README's docker section.
#
#   drover job run examples/docker.hcl
job "docker-web" {
  type = "service"

  group "web" {
    network {
      port "http" {
        to = 8080
      }
    }

    task "httpd" {
      driver = "docker"

      config {
        image   = "busybox:local"
        command = "/bin/sh"
        args    = ["-c", "echo hello from ${NOMAD_ALLOC_ID} > /local/index.html; exec httpd -f -p 8080 -h /local"]
        ports   = ["http"]
        labels {
          team = "web"
        }
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
