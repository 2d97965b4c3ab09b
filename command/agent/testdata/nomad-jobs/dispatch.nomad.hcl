# A parameterized batch job: registered once, then dispatched with a
# payload and meta.
job "video-encode" {
  datacenters = ["dc1"]
  type        = "batch"

  parameterized {
    payload       = "optional"
    meta_required = ["input"]
    meta_optional = ["profile"]
  }

  group "encode" {
    task "ffmpeg" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo encoding ${NOMAD_META_input}"]
      }

      dispatch_payload {
        file = "input.json"
      }

      resources {
        cpu    = 200
        memory = 128
      }
    }
  }
}
