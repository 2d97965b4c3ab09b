package jobspec

import (
	"strings"
	"testing"
)

// A job file written for a current Nomad, with blocks for features Drover
// does not have, still parses; each skipped block is named in a warning.
func TestNomadOnlyBlocksAreIgnoredWithWarnings(t *testing.T) {
	src := `
job "example" {
  vault {
    policies = ["read"]
  }
  group "cache" {
    network {
      port "db" {
        to = 6379
      }
    }
    consul {
      namespace = "prod"
    }
    task "redis" {
      driver = "docker"
      config {
        image = "redis:7"
        ports = ["db"]
      }
      identity {
        env  = true
        file = true
      }
      identity "vault_default" {
        aud = ["vault.io"]
      }
      action "flush" {
        command = "redis-cli"
        args    = ["FLUSHALL"]
      }
      resources {
        cpu    = 500
        memory = 256
      }
      scaling "cpu" {
        min = 100
        max = 500
      }
    }
  }
}
`
	job, warnings, err := ParseWithWarnings(&ParseConfig{Path: "example.nomad.hcl", Body: []byte(src)})
	if err != nil {
		t.Fatalf("a current Nomad job file must parse: %v", err)
	}
	if got := *job.TaskGroups[0].Tasks[0].Resources.MemoryMB; got != 256 {
		t.Fatalf("the rest of the job must be decoded, memory = %d", got)
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{`Block "vault" ignored`, `Block "scaling" ignored`, `Block "consul" ignored`, `Block "identity" ignored`, `Block "action" ignored`, "example.nomad.hcl:"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings do not mention %q:\n%s", want, joined)
		}
	}

	// Blocks Drover does not know at all are still errors.
	_, _, err = ParseWithWarnings(&ParseConfig{Path: "bad.hcl", Body: []byte("job \"x\" {\n  group \"g\" {\n    sprocket {}\n  }\n}\n")})
	if err == nil || !strings.Contains(err.Error(), "sprocket") {
		t.Fatalf("an unknown block must be an error, got %v", err)
	}
}
