package jobspec

import (
	"testing"
	"time"
)

// TestExampleRollingJobParses checks the README's rolling-update example:
// its update block, its http check, and the version and canary variables
// the walkthrough sets with -var.
func TestExampleRollingJobParses(t *testing.T) {
	job, err := ParseWithConfig(&ParseConfig{Path: "../examples/rolling.hcl", ArgVars: []string{"version=v2", "canary=1"}})
	if err != nil {
		t.Fatal(err)
	}
	g := job.TaskGroups[0]
	u := job.Update
	if g.Update != nil {
		u = g.Update
	}
	if u == nil || *u.MaxParallel != 1 || *u.Canary != 1 || *u.HealthCheck != "checks" || !*u.AutoRevert ||
		*u.MinHealthyTime != 2*time.Second || *u.ProgressDeadline != 5*time.Minute {
		t.Fatalf("update = %+v", u)
	}
	if len(g.Services) != 1 || len(g.Services[0].Checks) != 1 {
		t.Fatalf("services = %+v", g.Services)
	}
	if c := g.Services[0].Checks[0]; c.Type != "http" || c.Path != "/version" || c.Interval != 2*time.Second || g.Services[0].PortLabel != "http" {
		t.Fatalf("check = %+v", c)
	}
	args := g.Tasks[0].Config["args"].([]interface{})
	want := "mkdir -p local/www && printf %s v2 > local/www/version && exec /usr/bin/python3 -m http.server ${NOMAD_PORT_http} --directory local/www"
	if len(args) != 2 || args[1] != want {
		t.Fatalf("args = %q, want the version set by -var in\n%q", args, want)
	}
}
