package httpapi

import (
	"strings"
	"testing"

	"github.com/drover-sched/drover/jobspec"
)

// TestDriverConfigFromHCLIsCheckedAsParsed: a config straight from the
// job file parser (ints, []any, blocks as []map[string]any, no JSON in
// between) is judged by the driver's schema like a JSON one.
func TestDriverConfigFromHCLIsCheckedAsParsed(t *testing.T) {
	parse := func(config string) error {
		src := `job "j" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {` + config + `
      }
    }
  }
}`
		aj, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{Path: "j.hcl", Body: []byte(src)})
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		aj.Canonicalize()
		job := ApiJobToStructJob(aj)
		job.Canonicalize()
		return job.Validate()
	}
	good := `
        command       = "/bin/sleep"
        args          = ["${NOMAD_META_secs}", 2]
        oom_score_adj = 100
        cgroup_v1_override {
          pids = "/sys/fs/cgroup/pids/app"
        }`
	if err := parse(good); err != nil {
		t.Fatalf("a good config refused: %v", err)
	}
	for bad, want := range map[string]string{
		`
        command = "/bin/sleep"
        arg     = ["1"]`: `driver "raw_exec": unknown config key "arg"; did you mean "args"?`,
		`
        command = "/bin/sleep"
        args    = "1"`: `config key "args" must be a list of strings, got a string ("1")`,
		`
        command = "/bin/sleep"
        args {
          x = 1
        }`: `config key "args" must be a list of strings, got a block`,
		`
        command = ["/bin/sleep"]`: `config key "command" must be a string, got a list`,
	} {
		if err := parse(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("config%s\ngot %v, want an error containing %q", bad, err, want)
		}
	}
}
