package api

import "net/http"

// Actions on a running allocation, answered by the agent of the node that
// runs it (any agent forwards them there): restart or signal its tasks in
// place, and collect a finished one's directory.

// AllocationRestartRequest is the body of a restart: one task by name, or
// every running task when TaskName is empty (AllTasks says so
// explicitly; Drover has no task lifecycle order, so the two are the
// same).
type AllocationRestartRequest struct {
	TaskName string
	AllTasks bool
}

// AllocSignalRequest is the body of a signal: a name such as "SIGHUP", and
// the task, or every running task when Task is empty.
type AllocSignalRequest struct {
	Task   string
	Signal string
}

// Restart restarts a task of a running allocation, or every running task
// when task is "" (PUT /v1/client/allocation/:id/restart). The restart
// does not count against the restart policy. It returns once the old
// processes have exited.
func (a *Allocations) Restart(allocID, task string, q *QueryOptions) error {
	return a.c.putQuery("/v1/client/allocation/"+escape(allocID)+"/restart", &AllocationRestartRequest{TaskName: task}, nil, q)
}

// RestartAllTasks restarts every running task of the allocation.
func (a *Allocations) RestartAllTasks(allocID string, q *QueryOptions) error {
	return a.c.putQuery("/v1/client/allocation/"+escape(allocID)+"/restart", &AllocationRestartRequest{AllTasks: true}, nil, q)
}

// Signal sends a signal to a task of a running allocation, or to every
// running task when task is "" (PUT /v1/client/allocation/:id/signal).
func (a *Allocations) Signal(allocID, task, signal string, q *QueryOptions) error {
	return a.c.putQuery("/v1/client/allocation/"+escape(allocID)+"/signal", &AllocSignalRequest{Task: task, Signal: signal}, nil, q)
}

// GC removes a finished allocation's directory from its node now (GET
// /v1/client/allocation/:id/gc). The agent refuses an allocation that is
// still running.
func (a *Allocations) GC(allocID string, q *QueryOptions) error {
	_, err := a.c.query("/v1/client/allocation/"+escape(allocID)+"/gc", nil, q)
	return err
}

// putQuery sends in with PUT and read options: an action on a client is
// not a write to the servers' state, so it takes QueryOptions, as in
// Nomad.
func (c *Client) putQuery(path string, in, out any, q *QueryOptions) error {
	r := c.newRequest(http.MethodPut, path)
	r.setQueryOptions(q)
	r.body = in
	resp, cancel, _, err := c.do(r)
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	return decodeBody(resp, out)
}
