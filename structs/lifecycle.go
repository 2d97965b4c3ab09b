package structs

// Task lifecycle hooks: when a task runs relative to the group's main
// tasks (those without a lifecycle block).
//
//   - prestart runs before the main tasks start. Without sidecar it must
//     complete successfully first; with sidecar it must be running first
//     and then runs alongside them.
//   - poststart starts once every main task has started; with sidecar it
//     runs alongside them, without it runs to completion.
//   - poststop runs to completion after every other task has stopped,
//     however they stopped (completed, failed or killed).
const (
	TaskLifecycleHookPrestart  = "prestart"
	TaskLifecycleHookPoststart = "poststart"
	TaskLifecycleHookPoststop  = "poststop"
)

// LifecycleHook returns the task's hook, "" for a main task.
func (t *Task) LifecycleHook() string {
	if t.Lifecycle == nil {
		return ""
	}
	return t.Lifecycle.Hook
}

// IsMain reports whether the task is one of its group's main tasks.
func (t *Task) IsMain() bool { return t.LifecycleHook() == "" }

// IsSidecar reports whether the task is a prestart or poststart sidecar:
// a long-running helper that is stopped when the main tasks are done.
func (t *Task) IsSidecar() bool {
	h := t.LifecycleHook()
	return t.Lifecycle != nil && t.Lifecycle.Sidecar && (h == TaskLifecycleHookPrestart || h == TaskLifecycleHookPoststart)
}

// IsEphemeral reports whether the task is a lifecycle task that runs to
// completion: it is not restarted after it exits successfully, even in a
// service job.
func (t *Task) IsEphemeral() bool { return !t.IsMain() && !t.IsSidecar() }
