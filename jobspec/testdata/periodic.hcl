# A periodic cleanup that must not overlap with itself.
job "cleanup" {
  type = "batch"

  periodic {
    crons            = ["0 3 * * *"]
    prohibit_overlap = true
    time_zone        = "UTC"
  }

  group "cleanup" {
    task "cleanup" {
      driver = "exec"

      config {
        command = "/usr/bin/find"
        args    = ["/tmp", "-mtime", "+7", "-delete"]
      }

      logs {
        max_files     = 2
        max_file_size = 5
      }
    }
  }
}
