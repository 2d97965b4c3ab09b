package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strings"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/client/allocdir"
	"github.com/drover-sched/drover/client/drivers"
	"github.com/drover-sched/drover/client/hoststats"
	"github.com/drover-sched/drover/client/taskrunner"
)

// Actions on an allocation that only its node's agent can carry out:
// restart and signal its tasks, collect its directory. Like logs and
// stats (http_client_fs.go), any agent accepts them and forwards them to
// the agent that runs the allocation.

// ClientActions is what these endpoints, the alloc dir reads and the host
// stats need of the local client, beyond Client. The real client
// has them all (through its embedded *client.Client); an agent whose
// client lacks them answers 501.
type ClientActions interface {
	RestartAlloc(ctx context.Context, allocID, task string) error
	SignalAlloc(ctx context.Context, allocID, task, signal string) error
	GCAlloc(allocID string) error
	AllocFileList(allocID, path string) ([]allocdir.FileInfo, error)
	AllocFileStat(allocID, path string) (allocdir.FileInfo, error)
	AllocFileOpen(allocID, path string) (*os.File, error)
	HostStats() (*hoststats.Stats, error)
}

// maxActionBody bounds the JSON body of an action; theirs are a few
// dozen bytes.
const maxActionBody = 1 << 20

func (s *httpAPI) localActions() (ClientActions, error) {
	if a, ok := s.client.(ClientActions); ok {
		return a, nil
	}
	return nil, &codedError{code: http.StatusNotImplemented, msg: "this agent's client cannot act on allocations"}
}

func (s *httpAPI) clientAllocRestart(w http.ResponseWriter, r *http.Request) {
	var req api.AllocationRestartRequest
	err := readActionBody(r, &req)
	if err == nil && req.AllTasks && req.TaskName != "" {
		err = badRequest("TaskName %q and AllTasks are exclusive: name one task, or ask for all", req.TaskName)
	}
	s.clientAction(w, r, err, capsLifecycle, struct{}{}, func(c ClientActions, allocID string) error {
		return c.RestartAlloc(r.Context(), allocID, req.TaskName)
	})
}

func (s *httpAPI) clientAllocSignal(w http.ResponseWriter, r *http.Request) {
	var req api.AllocSignalRequest
	err := readActionBody(r, &req)
	if err == nil {
		err = checkSignalParam(req.Signal)
	}
	s.clientAction(w, r, err, capsLifecycle, struct{}{}, func(c ClientActions, allocID string) error {
		return c.SignalAlloc(r.Context(), allocID, req.Task, req.Signal)
	})
}

// clientAllocGC answers with an empty body, as Nomad's agent does: its
// client's Nodes().GcAlloc reads the answer into nothing and takes any
// body as an error. (Its Allocations().GC wants a body, so it fails
// against Nomad and Drover alike; Nodes().GcAlloc is the one that works.)
func (s *httpAPI) clientAllocGC(w http.ResponseWriter, r *http.Request) {
	s.clientAction(w, r, nil, capsAllocGC, nil, func(c ClientActions, allocID string) error {
		return c.GCAlloc(allocID)
	})
}

// clientAction writes parseErr if there is one; otherwise it runs act on
// the local client, or forwards the request to the allocation's node; the
// token must allow one of caps (see locateAlloc). On success it answers
// with reply as JSON, or with an empty body when reply is nil (see
// clientAllocGC).
func (s *httpAPI) clientAction(w http.ResponseWriter, r *http.Request, parseErr error, caps []string, reply any, act func(ClientActions, string) error) {
	if parseErr != nil {
		s.writeError(w, r, parseErr)
		return
	}
	allocID, local, err := s.locateAlloc(w, r, caps)
	if err != nil || !local {
		if err != nil {
			s.writeError(w, r, err)
		}
		return
	}
	c, err := s.localActions()
	if err == nil {
		err = act(c, allocID)
	}
	if err != nil {
		s.writeError(w, r, clientError(err))
		return
	}
	if reply == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	s.writeJSON(w, r, reply)
}

// checkSignalParam refuses a missing or unknown signal, naming the field
// and the signals Drover can send.
func checkSignalParam(signal string) error {
	valid := strings.Join(drivers.SignalNames(), ", ")
	if signal == "" {
		return badRequest("Signal is required: one of %s", valid)
	}
	if err := client.CheckSignal(signal); err != nil {
		return badRequest("Signal %q is not a signal Drover can send: use one of %s", signal, valid)
	}
	return nil
}

// readActionBody decodes an optional JSON body and puts the bytes back,
// so that a request forwarded to another agent still carries them.
func readActionBody(r *http.Request, out any) error {
	if r.Body == nil {
		return nil
	}
	buf, err := io.ReadAll(io.LimitReader(r.Body, maxActionBody+1))
	r.Body.Close()
	var coded *codedError
	switch {
	case errors.As(err, &coded):
		return coded // the body took too long (bodyDeadline)
	case err != nil:
		return badRequest("reading request body: %v", err)
	}
	if len(buf) > maxActionBody {
		return badRequest("request body is larger than %d bytes", maxActionBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(buf))
	if len(bytes.TrimSpace(buf)) == 0 {
		return nil
	}
	return decodeBody(&http.Request{Body: io.NopCloser(bytes.NewReader(buf))}, out)
}

// clientError gives the client's errors the status a caller should see:
// the request conflicts with the allocation's state (409), asks for
// something impossible (400), names what is not there (404), or what the
// caller may not read (403: a task's secrets, say).
func clientError(err error) error {
	code := 0
	switch {
	case errors.Is(err, taskrunner.ErrTaskNotRunning), errors.Is(err, client.ErrAllocNotTerminal):
		code = http.StatusConflict
	case errors.Is(err, client.ErrUnknownSignal), errors.Is(err, drivers.ErrSignalsUnsupported),
		errors.Is(err, allocdir.ErrPathEscapes), errors.Is(err, allocdir.ErrNotDir), errors.Is(err, allocdir.ErrNotRegular):
		code = http.StatusBadRequest
	case errors.Is(err, fs.ErrNotExist):
		code = http.StatusNotFound
	case errors.Is(err, fs.ErrPermission), errors.Is(err, allocdir.ErrSecretsDir):
		code = http.StatusForbidden
	default:
		return err
	}
	return &codedError{code: code, msg: err.Error()}
}

// notOnNode rephrases forwardToNode's "node not found" for requests that
// name a node rather than an allocation.
func notOnNode(nodeID string, err error) error {
	if errorStatus(err) == http.StatusNotFound {
		return notFound("node %s not found", nodeID)
	}
	return fmt.Errorf("node %s: %w", nodeID, err)
}
