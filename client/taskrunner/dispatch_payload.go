package taskrunner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/taskuser"
	"github.com/drover-sched/drover/structs"
)

// dispatchPayloadHook is the prestart hook of a task with a
// dispatch_payload block: it writes the payload of the dispatched job the
// alloc belongs to into the task's local directory (local/<file>), so the
// task finds it when it starts, as in Nomad. The payload travels raw in
// the alloc's job (Job.Payload). A job that was not dispatched, or a
// dispatch without a payload, writes an empty file: the task can rely on
// the file being there. A block without a file writes nothing, as in
// Nomad. It runs before every start, like the templates, so a restarted
// task finds the payload as it was dispatched. A failure is a "Task hook
// failed" event, as Nomad reports a failed prestart hook, and a
// recoverable failed start that the restart policy judges.
//
// The write goes through an os.Root on the local directory, so neither a
// "../" in the file nor a symlink the task left in its directory can make
// the client write outside it.
type dispatchPayloadHook struct {
	hookDeps
}

func (*dispatchPayloadHook) Name() string { return "dispatch_payload" }

func (h *dispatchPayloadHook) Prestart(_ context.Context, req *PrestartRequest, _ *PrestartResponse) error {
	if err := writeDispatchPayload(req.TaskDir, req.Alloc.Job, req.Task, req.User); err != nil {
		h.logger.Warn("failed to write the dispatch payload", "error", err)
		h.events.EmitEvent(hookFailedEvent(h.clock.Now(), err))
		return &drivers.RecoverableError{Err: err}
	}
	return nil
}

// writeDispatchPayload writes the payload file, the task's user's (owner)
// when the task runs as another user than the client's.
func writeDispatchPayload(td allocdir.TaskDir, job *structs.Job, task *structs.Task, owner *taskuser.User) error {
	if task.DispatchPayload == nil || task.DispatchPayload.File == "" {
		return nil
	}
	file := filepath.Clean(task.DispatchPayload.File)
	root, err := os.OpenRoot(td.LocalDir)
	if err != nil {
		return fmt.Errorf("dispatch_payload: opening the task's local directory: %w", err)
	}
	defer root.Close()
	if dir := filepath.Dir(file); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("dispatch_payload: creating local/%s: %w", dir, err)
		}
	}
	var payload []byte
	if job != nil {
		payload = job.Payload
	}
	if err := root.WriteFile(file, payload, 0o644); err != nil {
		return fmt.Errorf("dispatch_payload: writing local/%s: %w", file, err)
	}
	if owner != nil {
		if err := root.Lchown(file, owner.UID, owner.GID); err != nil {
			return fmt.Errorf("dispatch_payload: giving local/%s to the task's user: %w", file, err)
		}
	}
	return nil
}
