package exec

import (
	"errors"
	"strings"
	"testing"

	"github.com/drover-sched/drover/client/taskuser"
)

// The driver refuses a denied user itself, not only the task runner
// before it: a StartTask that reaches the driver by any path runs no task
// as root, by name or by uid, unless the client's policy allows it.
func TestTheDriverRefusesADeniedUserItself(t *testing.T) {
	needRoot(t)
	for _, user := range []string{"root", "0"} {
		t.Run(user, func(t *testing.T) {
			d := newDriver(t)
			cfg, _, _ := testTask(t, `id -u`)
			cfg.User = user
			_, err := d.StartTask(cfg)
			var denied *taskuser.DeniedError
			if !errors.As(err, &denied) || !strings.Contains(err.Error(), "user.denylist") {
				t.Fatalf("StartTask as %s: %v, want the user.denylist refusal", user, err)
			}
		})
	}
	t.Run("a policy that checks another driver lets root run", func(t *testing.T) {
		d := New(Options{Enabled: true, Users: &taskuser.Policy{Denylist: []string{"root"}, CheckedDrivers: []string{"java"}}})
		t.Cleanup(d.Shutdown)
		cfg, stdout, stderr := testTask(t, `id -u`)
		cfg.User = "root"
		start(t, d, cfg)
		if res := waitExit(t, d, cfg.ID); !res.Successful() {
			t.Fatalf("exit %+v: %s", res, stderr.String())
		}
		waitOutput(t, stdout, "0\n")
	})
}
