job "web" {
  group "web" {
    count = 2
    network {
      mode = "bridge"
      port "http" {
        to = 8080          # inside the namespace; the host port is dynamic
      }
      port "admin" {
        static = 9000      # host port 9000 ...
        to     = 9090      # ... to 9090 inside
      }
      dns {
        servers  = ["10.0.0.53"]
        searches = ["service.internal"]
      }
    }
    task "server" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $NOMAD_ALLOC_ID > local/index.html; exec busybox httpd -f -p $NOMAD_PORT_http -h local"]
      }
    }
  }
}
