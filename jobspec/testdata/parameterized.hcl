# A parameterized job, dispatched with a payload and metadata.
job "encode" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["input"]
    meta_optional = ["profile"]
  }

  group "encode" {
    task "encode" {
      driver = "raw_exec"

      dispatch_payload {
        file = "input.json"
      }

      config {
        command = "/usr/local/bin/encode"
        args    = ["--input", "${NOMAD_META_input}", "--payload", "local/input.json"]
      }
    }
  }
}
