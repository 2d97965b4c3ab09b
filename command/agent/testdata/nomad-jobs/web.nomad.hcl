# A typical web service as people write them for Nomad: variables, a
# dynamic port mapped to the app's port, a Nomad-native service with an
# HTTP check, a template and the usual group policies. It runs with
# raw_exec so a dev agent can place it.
variable "datacenters" {
  type    = list(string)
  default = ["dc1"]
}

variable "greeting" {
  type    = string
  default = "hello from web"
}

locals {
  app_name = "web"
}

job "web" {
  datacenters = var.datacenters
  type        = "service"

  meta {
    team = "frontend"
  }

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  update {
    max_parallel      = 1
    min_healthy_time  = "1s"
    healthy_deadline  = "1m"
    progress_deadline = "2m"
    auto_revert       = true
    canary            = 0
  }

  group "web" {
    count = 1

    network {
      port "http" {
        to = 8080
      }
    }

    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    reschedule {
      delay          = "30s"
      delay_function = "exponential"
      max_delay      = "1h"
      unlimited      = true
    }

    ephemeral_disk {
      size = 100
    }

    service {
      name     = local.app_name
      port     = "http"
      provider = "nomad"
      tags     = ["urlprefix-/", "v1"]

      check {
        name     = "http-alive"
        type     = "http"
        path     = "/health"
        interval = "10s"
        timeout  = "2s"
      }
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo \"$GREETING\"; exec sleep 3600"]
      }

      env {
        GREETING = var.greeting
        PORT     = "${NOMAD_PORT_http}"
      }

      template {
        data        = <<-EOT
          listen = "{{ env "NOMAD_ADDR_http" }}"
        EOT
        destination = "local/app.conf"
        change_mode = "restart"
      }

      logs {
        max_files     = 3
        max_file_size = 5
      }

      resources {
        cpu    = 100
        memory = 64
      }

      kill_timeout = "5s"
    }
  }
}
