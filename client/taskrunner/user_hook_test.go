package taskrunner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/drivers/mock"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/structs"
	"github.com/hashicorp/go-hclog"
)

// chrootWithEtc is a driver that resolves its task users from etc, as
// exec does from the /etc its tasks get.
type chrootWithEtc struct {
	drivers.Driver
	etc string
}

func (d chrootWithEtc) Capabilities() drivers.Capabilities {
	return drivers.Capabilities{FSIsolation: drivers.FSIsolationChroot, UserEtc: d.etc}
}

type discardEvents struct{}

func (discardEvents) EmitEvent(*structs.TaskEvent) {}

// userHookFixture is a built task dir and a user hook for a driver whose
// task /etc knows toor (uid 0) and app (uid 4242, unknown to the host).
func userHookFixture(t *testing.T) (*userHook, *PrestartRequest) {
	t.Helper()
	etc := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("passwd", "root:x:0:0::/root:/bin/sh\ntoor:x:0:0::/root:/bin/sh\ndrover-test-app:x:4242:4243::/:/bin/sh\n")
	write("group", "root:x:0:\n")
	clk := clock.NewFake(time.Time{})
	drv := mock.New("", clk)
	t.Cleanup(drv.Shutdown)
	dir := allocdir.New(t.TempDir(), structs.GenerateUUID())
	if err := dir.Build([]string{"t"}); err != nil {
		t.Fatal(err)
	}
	h := &userHook{hookDeps: hookDeps{events: discardEvents{}, clock: clk, logger: hclog.NewNullLogger()},
		driver: chrootWithEtc{drv, etc}, policy: taskuser.ParsePolicy(nil)}
	return h, &PrestartRequest{Task: &structs.Task{Name: "t", Driver: "exec"}, AllocDir: dir, TaskDir: dir.Task("t")}
}

// uid 0 is refused however the job names it: by number, or by another
// name the driver's passwd gives uid 0.
func TestUserHookDeniesUIDZeroByAnyName(t *testing.T) {
	for _, user := range []string{"root", "0", "toor"} {
		h, req := userHookFixture(t)
		req.Task.User = user
		err := h.Prestart(context.Background(), req, &PrestartResponse{})
		var de *taskuser.DeniedError
		if !errors.As(err, &de) {
			t.Fatalf("user %q: got %v, want a DeniedError", user, err)
		}
	}
}

// The task's directories go to the uid the driver will run the task as,
// from the driver's passwd, not from the host's NSS (which does not know
// the user at all).
func TestUserHookOwnsDirsToTheDriversUID(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	h, req := userHookFixture(t)
	req.Task.User = "drover-test-app"
	var resp PrestartResponse
	if err := h.Prestart(context.Background(), req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.User == nil || resp.User.UID != 4242 || resp.User.GID != 4243 {
		t.Fatalf("resp.User = %+v, want uid 4242 gid 4243", resp.User)
	}
	fi, err := os.Stat(req.TaskDir.LocalDir)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4242 || st.Gid != 4243 {
		t.Fatalf("local/ owned by %d:%d, want 4242:4243", st.Uid, st.Gid)
	}
}
