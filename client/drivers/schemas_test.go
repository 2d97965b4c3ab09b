package drivers_test

import (
	"testing"

	"github.com/drover-sched/drover/client/drivers/docker"
	"github.com/drover-sched/drover/client/drivers/exec"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/drivers/rawexec"
	"github.com/drover-sched/drover/structs"
)

// TestEveryBuiltInDriverHasAConfigSchema: job validation checks a task's
// config only against a schema registered under the driver's name, so a
// built-in driver without one (or under a name that drifted) would let
// typos through to the client again.
func TestEveryBuiltInDriverHasAConfigSchema(t *testing.T) {
	for _, name := range []string{exec.Name, rawexec.Name, docker.Name, mock.Name, mock.Alias} {
		s := structs.DriverConfigSchemaFor(name)
		if s == nil {
			t.Errorf("driver %q has no config schema in structs", name)
			continue
		}
		if len(s.Keys) == 0 {
			t.Errorf("driver %q has an empty config schema", name)
		}
	}
	for _, name := range []string{exec.Name, rawexec.Name} {
		if k := structs.DriverConfigSchemaFor(name).Keys[structs.DriverConfigCommand]; !k.Required || k.Kind != structs.KindString {
			t.Errorf("driver %q: command must be a required string, is %+v", name, k)
		}
	}
	if k := structs.DriverConfigSchemaFor(docker.Name).Keys[structs.DockerConfigImage]; !k.Required || k.Kind != structs.KindString {
		t.Errorf("driver %q: image must be a required string, is %+v", docker.Name, k)
	}
}
