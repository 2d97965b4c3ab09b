package docker

import (
	"fmt"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
)

// oomConfirmWait bounds how long an exit that looks like an OOM kill waits
// for the daemon to say so. Under load the daemon's oom event has come
// more than 2 s after the exit; the wait is spent only on a SIGKILL the
// driver did not send to a container with a memory limit, and a real OOM
// kill ends it as soon as the daemon tells.
const oomConfirmWait = 10 * time.Second

// confirmOOM reports whether the daemon saw an OOM kill of the container.
// The daemon learns of the kill and of the exit from two events that race:
// when the exit comes first, inspect says OOMKilled false although the
// kernel killed the task for its memory. The daemon's event log keeps the
// oom event, so it is asked (and inspect again) for a short while. This
// runs only for a SIGKILL exit of a container with a memory limit that the
// driver did not kill itself.
func (d *Driver) confirmOOM(containerID string, since time.Time) bool {
	deadline := time.Now().Add(oomConfirmWait)
	for {
		if d.sawOOMEvent(containerID, since) {
			return true
		}
		ctx, cancel := d.call()
		info, err := d.docker.ContainerInspect(ctx, containerID)
		cancel()
		if err == nil && info.State != nil && info.State.OOMKilled {
			return true
		}
		if time.Now().After(deadline) || d.ctx.Err() != nil {
			return false
		}
		timer := time.NewTimer(100 * time.Millisecond)
		select {
		case <-timer.C:
		case <-d.ctx.Done():
			timer.Stop()
			return false
		}
	}
}

// sawOOMEvent looks for an oom event of the container in the daemon's
// event log, from since until now (so the call returns at once).
func (d *Driver) sawOOMEvent(containerID string, since time.Time) bool {
	ctx, cancel := d.call()
	defer cancel()
	now := time.Now()
	msgs, errs := d.docker.Events(ctx, events.ListOptions{
		Since:   fmt.Sprintf("%d", since.Add(-time.Second).Unix()),
		Until:   fmt.Sprintf("%d.%09d", now.Unix(), now.Nanosecond()),
		Filters: filters.NewArgs(filters.Arg("type", "container"), filters.Arg("container", containerID), filters.Arg("event", "oom")),
	})
	for {
		select {
		case m := <-msgs:
			if m.Action == events.ActionOOM {
				return true
			}
		case <-errs:
			// The stream ended (io.EOF at until) or failed: no oom seen.
			return false
		case <-ctx.Done():
			return false
		}
	}
}
