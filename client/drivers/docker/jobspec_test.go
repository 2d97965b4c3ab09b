package docker

import (
	"os"
	"strings"
	"testing"

	"github.com/drover-sched/drover/jobspec"
)

// A docker task config written as Nomad's docs write it decodes, through
// the jobspec parser's shapes (blocks as lists of maps), into TaskConfig.
func TestNomadShapedConfigDecodes(t *testing.T) {
	src := `job "j" {
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image              = "redis:7"
        command            = "redis-server"
        args               = ["--port", "6379"]
        ports              = ["db"]
        network_mode       = "bridge"
        dns_servers        = ["10.0.0.53"]
        force_pull         = true
        image_pull_timeout = "10m"
        auth_soft_fail     = true
        ulimit {
          nofile = "4096:8192"
        }
        auth {
          username       = "u"
          password       = "p"
          server_address = "registry.example:5000"
        }
        logging {
          type = "json-file"
          config {
            max-size = "10m"
          }
        }
        mount {
          type   = "tmpfs"
          target = "/scratch"
          tmpfs_options {
            size = 100000
          }
        }
        mount {
          type     = "bind"
          source   = "local/conf"
          target   = "/etc/redis"
          readonly = true
        }
        healthchecks {
          disable = true
        }
      }
    }
  }
}`
	job, err := jobspec.Parse("j.hcl", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := ParseTaskConfig(job.TaskGroups[0].Tasks[0].Config)
	if err != nil {
		t.Fatalf("ParseTaskConfig: %v", err)
	}
	if tc.Image != "redis:7" || tc.Command != "redis-server" || len(tc.Args) != 2 || tc.Ports[0] != "db" || !tc.ForcePull ||
		tc.ImagePullTimeout.Minutes() != 10 || !tc.AuthSoftFail || tc.Ulimit["nofile"] != "4096:8192" ||
		tc.Auth == nil || tc.Auth.ServerAddress != "registry.example:5000" || tc.Logging.Config["max-size"] != "10m" ||
		len(tc.Mounts) != 2 || tc.Mounts[0].TmpfsSize != 100000 || !tc.Mounts[1].ReadOnly || !tc.HealthchecksOff {
		t.Fatalf("decoded = %+v", tc)
	}
}

func TestTheExampleJobDecodes(t *testing.T) {
	f, err := os.Open("../../../examples/docker.hcl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	job, err := jobspec.Parse("docker.hcl", f)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := ParseTaskConfig(job.TaskGroups[0].Tasks[0].Config)
	if err != nil || tc.Labels["team"] != "web" || tc.Ports[0] != "http" {
		t.Fatalf("ParseTaskConfig = %+v, %v", tc, err)
	}
}
