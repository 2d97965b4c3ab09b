package taskrunner

import (
	"context"
	"errors"
	"os"

	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/taskuser"
)

// userHook is the first prestart hook: it decides which user the task
// runs as, refuses a user the client's user.denylist denies for the
// task's driver, and gives that user the task's own directories
// (allocdir.TaskDir.Chown) when the driver isolates the task's file
// system. The hooks after it write into those directories (payload,
// artifacts, templates) and make their files the same user's; it hands
// the user on in PrestartResponse.User.
//
// A denied user fails the task for good, with an event naming the user
// and the setting: no restart makes the user allowed. The scheduler
// refuses such a node already (taskuser's package doc); this is the check
// for a node whose options changed, or a scheduler that did not know.
//
// A driver without isolation (raw_exec) runs the task as the client's
// own user: nothing is chowned. A driver that declares no capabilities
// has a default user the hook cannot know: only a user the task names is
// checked. An image driver's task without a user
// runs as the image's default, which only the driver knows: it is
// neither checked nor chowned here.
type userHook struct {
	hookDeps
	driver drivers.Driver
	policy taskuser.Policy
}

func (*userHook) Name() string { return "user" }

func (h *userHook) Prestart(_ context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	caps := drivers.CapabilitiesOf(h.driver)
	name := req.Task.User
	if _, declared := h.driver.(drivers.CapabilitiesDriver); declared {
		name = taskUserName(caps, name)
	}
	resolve := userResolver(caps)
	if err := h.policy.Check(req.Task.Driver, name, resolve); err != nil {
		h.events.EmitEvent(hookFailedEvent(h.clock.Now(), err))
		return err
	}
	if caps.FSIsolation == drivers.FSIsolationNone || name == "" || os.Geteuid() != 0 {
		return nil
	}
	u, err := resolve(name)
	if err == nil {
		err = req.TaskDir.Chown(u.UID, u.GID)
	}
	if err != nil {
		h.events.EmitEvent(hookFailedEvent(h.clock.Now(), err))
		if errors.Is(err, os.ErrPermission) {
			return &drivers.RecoverableError{Err: err}
		}
		return err
	}
	resp.User = &u
	return nil
}

// userResolver resolves task users as the driver does: from the passwd
// and group files its tasks' /etc is copied from when it names them
// (Capabilities.UserEtc), else through the host's NSS. The denylist check
// and the owner of the task's directories then agree with the uid the
// task runs as.
func userResolver(caps drivers.Capabilities) taskuser.Resolver {
	if caps.UserEtc != "" {
		return func(name string) (taskuser.User, error) { return taskuser.LookupFiles(caps.UserEtc, name) }
	}
	return taskuser.Lookup
}

// taskUserName is the user a task runs as: its own `user`, else its
// driver's default (see taskuser's package doc); "" when only the driver
// knows.
func taskUserName(caps drivers.Capabilities, user string) string {
	if user != "" {
		return user
	}
	switch caps.FSIsolation {
	case drivers.FSIsolationNone:
		return taskuser.Current()
	case drivers.FSIsolationChroot:
		return taskuser.DefaultIsolatedUser
	}
	return ""
}
