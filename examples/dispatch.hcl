# A parameterized batch job: registered once, it runs only when dispatched,
# one instance per dispatch, each with its own payload and meta.
#
#   drover job run examples/dispatch.hcl
#   echo '{"rows": 3}' | drover job dispatch -meta input=report.csv process -
#
# The instance's task finds the payload in local/input.json and the meta
# in NOMAD_META_input and NOMAD_META_profile (the job's default profile
# unless the dispatch sets one).
job "process" {
  type = "batch"

  parameterized {
    payload       = "required"
    meta_required = ["input"]
    meta_optional = ["profile"]
  }

  meta {
    profile = "standard"
  }

  group "process" {
    task "process" {
      driver = "raw_exec"

      dispatch_payload {
        file = "input.json"
      }

      config {
        command = "/bin/sh"
        args = [
          "-c",
          "echo \"processing ${NOMAD_META_input} (profile ${NOMAD_META_profile})\"; cat \"${NOMAD_TASK_DIR}/input.json\"",
        ]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
