package docker

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/helper/testutil/dockerimage"
)

// A task's auth block pulls from a registry that wants credentials; a
// wrong password fails the start, not to be retried, with an error naming
// the image and what the registry answered; auth_soft_fail tries once
// more without credentials, which this registry refuses too.
func TestPullWithAuth(t *testing.T) {
	d, cli := newTestDriver(t, nil)
	user := &dockerimage.RegistryUser{Name: "drover", Password: "s3cret"}
	reg := dockerimage.StartRegistry(t, user)
	ref := reg + "/private/busybox:1"
	dockerimage.Push(t, cli, dockerimage.Ref, ref, dockerimage.RegistryAuth(t, reg, user))
	t.Cleanup(func() { removeTag(t, cli, ref) })

	for _, c := range []struct {
		name     string
		password string
		soft     bool
		ok       bool
	}{
		{"wrong password", "wrong", false, false},
		{"wrong password, auth_soft_fail", "wrong", true, false},
		{"right password", "s3cret", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if imagePresent(t, cli, ref) {
				removeTag(t, cli, ref)
			}
			tt := newTestTask(t, cli, map[string]any{
				"image": ref, "command": "true", "auth_soft_fail": c.soft,
				"auth": []map[string]any{{"username": "drover", "password": c.password}},
			})
			_, err := d.StartTask(tt.cfg)
			if c.ok {
				if err != nil {
					t.Fatalf("StartTask with the right password: %v", err)
				}
				if res := waitExit(t, d, tt.cfg.ID, 30*time.Second); !res.Successful() {
					t.Fatalf("task of the pulled image: %+v", res)
				}
				if !imagePresent(t, cli, ref) {
					t.Fatal("the image was not pulled")
				}
				return
			}
			if err == nil {
				_ = d.DestroyTask(tt.cfg.ID, true)
				t.Fatal("StartTask with a wrong password succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, `pulling image "`+ref+`"`) ||
				!strings.Contains(msg, "unauthorized: authentication required") && !strings.Contains(msg, "no basic auth credentials") {
				t.Fatalf("StartTask = %v, want an error naming the image and the registry's refusal", err)
			}
			if drivers.IsRecoverable(err) {
				t.Fatalf("refused credentials are retried: %v", err)
			}
			if imagePresent(t, cli, ref) {
				t.Fatal("the image is on the node after a refused pull")
			}
		})
	}
}
