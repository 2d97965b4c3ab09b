package client

import (
	"fmt"
	"io"
	"time"

	"github.com/drover-sched/drover/client/logmon"
	"github.com/drover-sched/drover/structs"
)

// ErrUnknownAlloc is returned for an alloc this client does not have (never
// ran it, or its directory was garbage collected).
var ErrUnknownAlloc = structs.NewCodedError("UnknownAlloc", "unknown allocation")

// ErrUnknownTask is returned for a task name the alloc does not have.
var ErrUnknownTask = structs.NewCodedError("UnknownTask", "unknown task")

// AllocLogs streams a task's stdout or stderr. origin is "start" or "end"
// and offset counts bytes from it; with follow, the reader waits for new
// output until the task is dead or the reader is closed. Logs stay readable
// after the alloc finishes, until the GC removes its directory.
func (c *Client) AllocLogs(allocID, task, logType, origin string, offset int64, follow bool) (io.ReadCloser, error) {
	ar := c.runner(allocID)
	if ar == nil {
		return nil, fmt.Errorf("%w %s", ErrUnknownAlloc, allocID)
	}
	if ar.TaskState(task) == nil {
		if tg := ar.Alloc().LookupTaskGroup(); tg == nil || tg.LookupTask(task) == nil {
			return nil, fmt.Errorf("%w %q in alloc %s", ErrUnknownTask, task, structs.ShortID(allocID))
		}
	}
	done := func() bool {
		s := ar.TaskState(task)
		return s == nil || s.State == structs.TaskStateDead
	}
	return logmon.NewReader(ar.AllocDir().LogDir, task, logType, logmon.ReaderOptions{
		Origin: origin, Offset: offset, Follow: follow, Done: done, Clock: c.clock,
	})
}

// ResourceUsage is memory and CPU use.
type ResourceUsage struct {
	MemoryRSS       uint64
	CPUTotalSeconds float64
	Pids            int
}

// TaskResourceUsage is one task's usage.
type TaskResourceUsage struct {
	ResourceUsage
	Timestamp time.Time
}

// AllocResourceUsage is an alloc's usage: per task and summed, in the
// spirit of Nomad's AllocResourceUsage.
type AllocResourceUsage struct {
	ResourceUsage ResourceUsage
	Tasks         map[string]*TaskResourceUsage
	Timestamp     time.Time
}

// AllocStats samples the resource usage of an alloc's running tasks.
func (c *Client) AllocStats(allocID string) (*AllocResourceUsage, error) {
	ar := c.runner(allocID)
	if ar == nil {
		return nil, fmt.Errorf("%w %s", ErrUnknownAlloc, allocID)
	}
	out := &AllocResourceUsage{Tasks: map[string]*TaskResourceUsage{}, Timestamp: c.clock.Now()}
	for name, u := range ar.TaskStats() {
		tu := &TaskResourceUsage{ResourceUsage: ResourceUsage{MemoryRSS: u.MemoryRSS, CPUTotalSeconds: u.CPUTotalSeconds, Pids: u.Pids}, Timestamp: u.Timestamp}
		out.Tasks[name] = tu
		out.ResourceUsage.MemoryRSS += u.MemoryRSS
		out.ResourceUsage.CPUTotalSeconds += u.CPUTotalSeconds
		out.ResourceUsage.Pids += u.Pids
	}
	return out, nil
}
