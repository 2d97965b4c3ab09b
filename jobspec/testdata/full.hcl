# Every block and argument the parser knows, each set to a value that is not
# its default.
job "full" {
  name        = "full-name"
  region      = "eu"
  namespace   = "team-a"
  type        = "service"
  priority    = 70
  all_at_once = true
  datacenters = ["dc1", "dc2"]
  node_pool   = "pool-a"

  meta {
    owner = "ops"
  }

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  affinity {
    attribute = "${node.class}"
    value     = "fast"
    weight    = -20
  }

  spread {
    attribute = "${node.datacenter}"
    weight    = 30

    target "dc1" {
      percent = 70
    }
    target "dc2" {
      percent = 30
    }
  }

  update {
    stagger           = "1s"
    max_parallel      = 2
    health_check      = "task_states"
    min_healthy_time  = "3s"
    healthy_deadline  = "1m"
    progress_deadline = "2m"
    canary            = 1
    auto_revert       = true
    auto_promote      = true
  }

  periodic {
    crons            = ["*/5 * * * *", "0 1 * * *"]
    prohibit_overlap = true
    time_zone        = "Europe/Berlin"
    enabled          = true
  }

  parameterized {
    payload       = "required"
    meta_required = ["a"]
    meta_optional = ["b"]
  }

  reschedule {
    attempts = 4
  }

  migrate {
    max_parallel = 3
  }

  group "web" {
    count                        = 3
    shutdown_delay               = "5s"
    max_client_disconnect        = "1h"
    stop_after_client_disconnect = "1m"
    prevent_reschedule_on_lost   = true

    meta = {
      "tier.name" = "front"
    }

    constraint {
      distinct_hosts = true
    }

    constraint {
      distinct_property = "${meta.rack}"
      value             = "2"
    }

    constraint {
      attribute = "${attr.os.version}"
      operator  = "regexp"
      value     = "^12"
    }

    constraint {
      attribute = "${attr.nomad.version}"
      version   = ">= 1.0"
    }

    affinity {
      attribute = "${meta.rack}"
      value     = "r1"
      weight    = 10
    }

    spread {
      attribute = "${meta.rack}"
    }

    volume "data" {
      type            = "host"
      source          = "data"
      read_only       = true
      sticky          = true
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
      per_alloc       = true

      mount_options {
        fs_type     = "ext4"
        mount_flags = ["noatime"]
      }
    }

    restart {
      attempts         = 5
      interval         = "1m"
      delay            = "1s"
      mode             = "delay"
      render_templates = true
    }

    disconnect {
      lost_after           = "1h"
      stop_on_client_after = "1m"
      replace              = false
      reconcile            = "keep_original"
    }

    reschedule {
      attempts       = 2
      interval       = "1h"
      delay          = "1s"
      delay_function = "fibonacci"
      max_delay      = "1m"
      unlimited      = false
    }

    ephemeral_disk {
      sticky  = true
      migrate = true
      size    = 500
    }

    update {
      canary = 2
    }

    migrate {
      health_check     = "task_states"
      min_healthy_time = "1s"
      healthy_deadline = "1m"
    }

    network {
      mode     = "bridge"
      hostname = "web"

      port "http" {
        to = 8080
      }

      port "admin" {
        static           = 9000
        to               = 9000
        host_network     = "private"
        ignore_collision = true
      }

      dns {
        servers  = ["1.1.1.1"]
        searches = ["local"]
        options  = ["ndots:2"]
      }
    }

    service {
      name                = "web"
      tags                = ["a"]
      canary_tags         = ["c"]
      enable_tag_override = true
      port                = "http"
      address_mode        = "host"
      address             = "1.2.3.4"
      task                = "server"
      on_update           = "ignore_warnings"
      provider            = "nomad"

      meta {
        m = "1"
      }
      canary_meta {
        c = "1"
      }
      tagged_addresses {
        lan = "10.0.0.1"
      }

      check_restart {
        limit = 2
      }

      check {
        name                     = "alive"
        type                     = "http"
        path                     = "/health"
        protocol                 = "https"
        port                     = "http"
        method                   = "POST"
        body                     = "{}"
        interval                 = "10s"
        timeout                  = "2s"
        initial_status           = "passing"
        tls_server_name          = "web.local"
        tls_skip_verify          = true
        success_before_passing   = 2
        failures_before_critical = 3
        failures_before_warning  = 1
        on_update                = "ignore"

        header {
          X-A = ["1", "2"]
        }

        check_restart {
          limit           = 3
          grace           = "1s"
          ignore_warnings = true
        }
      }
    }

    task "server" {
      driver         = "raw_exec"
      user           = "nobody"
      leader         = true
      kill_timeout   = "20s"
      kill_signal    = "SIGTERM"
      shutdown_delay = "3s"

      lifecycle {
        hook    = "prestart"
        sidecar = true
      }

      config {
        command = "/bin/server"
        args    = ["-p", "${NOMAD_PORT_http}"]
        workers = 4
        ratio   = 0.5
        debug   = false
        labels = {
          app = "web"
        }

        mount {
          type   = "bind"
          source = "local"
        }
        mount {
          type = "tmpfs"
        }
      }

      env {
        PORT = "${NOMAD_PORT_http}"
      }

      meta {
        k = "v"
      }

      constraint {
        attribute = "${attr.cpu.arch}"
        operator  = "!="
        value     = "arm64"
      }

      affinity {
        attribute = "${attr.cpu.arch}"
        value     = "amd64"
      }

      resources {
        cpu        = 200
        memory     = 64
        memory_max = 128
        disk       = 10

        device "nvidia/gpu" {
          count = 2

          constraint {
            attribute = "${device.attr.memory}"
            operator  = ">="
            value     = "2 GiB"
          }

          affinity {
            attribute = "${device.model}"
            value     = "A100"
            weight    = 50
          }
        }
      }

      restart {
        attempts = 1
      }

      logs {
        max_files     = 3
        max_file_size = 5
        disabled      = true
      }

      artifact {
        source      = "https://example.com/a.tgz"
        destination = "local/a"
        mode        = "file"
        insecure    = true
        chown       = true

        options {
          checksum = "sha256:00"
        }
        headers {
          X = "y"
        }
      }

      template {
        data            = "x={{ .X }}"
        destination     = "local/out"
        change_mode     = "script"
        change_signal   = "SIGUSR1"
        once            = true
        splay           = "1s"
        perms           = "0600"
        uid             = 1000
        gid             = 1000
        left_delimiter  = "[["
        right_delimiter = "]]"
        env             = true

        error_on_missing_key = true

        change_script {
          command       = "/bin/reload"
          args          = ["-a"]
          timeout       = "1s"
          fail_on_error = true
        }

        wait {
          min = "1s"
          max = "1m"
        }
      }

      template {
        source      = "in.tpl"
        destination = "local/in"
      }

      dispatch_payload {
        file = "input.json"
      }

      volume_mount {
        volume           = "data"
        destination      = "/data"
        read_only        = true
        propagation_mode = "host-to-task"
        selinux_label    = "z"
      }

      service {
        name = "task-svc"
      }
    }
  }
}
