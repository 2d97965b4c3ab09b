package agent

import (
	"net/http"
	"strings"
	"testing"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/client/taskrunner"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/structs"
)

// signalScript records its pid in the shared alloc dir, records SIGUSR1,
// and makes symlinks that lead out of the alloc dir. It makes the links
// and hello.txt once, so a restart neither truncates nor replaces them
// under a reader, and hello.txt after the links, so a test that has read
// "hello" from it knows the links exist. It waits with the wait builtin,
// which a trapped signal interrupts at once.
const signalScript = `
echo $$ >> "$NOMAD_ALLOC_DIR/pids"
trap 'echo usr1 >> "$NOMAD_ALLOC_DIR/signals"' USR1
[ -L "$NOMAD_TASK_DIR/etc-link" ] || ln -s /etc "$NOMAD_TASK_DIR/etc-link"
[ -L "$NOMAD_TASK_DIR/up" ] || ln -s ../../.. "$NOMAD_TASK_DIR/up"
[ -f "$NOMAD_TASK_DIR/hello.txt" ] || echo hello > "$NOMAD_TASK_DIR/hello.txt"
while :; do sleep 1000 & wait; done
`

// shellJob is a service job running script with raw_exec as task "app".
func shellJob(id, script string) *api.Job {
	job := mockJob(id, 1)
	task := job.TaskGroups[0].Tasks[0]
	task.Driver = "raw_exec"
	task.Config = map[string]any{"command": "/bin/sh", "args": []any{"-c", script}}
	return job
}

// catAlloc reads a file of the alloc dir through the API; "" when it
// cannot (yet).
func catAlloc(t *testing.T, a *TestAgent, allocID, path string) string {
	t.Helper()
	resp, body := call(t, "GET", a.URL+"/v1/client/fs/cat/"+allocID+"?path="+path, nil)
	if resp.StatusCode != 200 {
		return ""
	}
	return string(body)
}

func taskState(t *testing.T, a *TestAgent, allocID, task string) (*structs.TaskState, string) {
	t.Helper()
	var alloc structs.Allocation
	callOK(t, "GET", a.URL+"/v1/allocation/"+allocID, nil, &alloc)
	return alloc.TaskStates[task], alloc.ClientStatus
}

func hasEvent(s *structs.TaskState, typ string) bool {
	for _, e := range s.Events {
		if e.Type == typ {
			return true
		}
	}
	return false
}

func TestSignalAndRestartARunningTask(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	registerJob(t, a, shellJob("sig", signalScript))
	alloc := waitRunning(t, a, "sig").ID
	waitUntil(t, "the task's pid", func() bool { return strings.Count(catAlloc(t, a, alloc, "alloc/pids"), "\n") == 1 })
	firstPid := strings.TrimSpace(catAlloc(t, a, alloc, "alloc/pids"))
	url := a.URL + "/v1/client/allocation/" + alloc

	callOK(t, "PUT", url+"/signal", api.AllocSignalRequest{Task: "app", Signal: "SIGUSR1"}, nil)
	waitUntil(t, "the trap to record SIGUSR1", func() bool { return catAlloc(t, a, alloc, "alloc/signals") == "usr1\n" })
	waitUntil(t, "the Signaling event", func() bool {
		s, _ := taskState(t, a, alloc, "app")
		return s != nil && hasEvent(s, taskrunner.TaskSignaling)
	})
	// Signalling every task (Task "") reaches app too.
	callOK(t, "POST", url+"/signal", api.AllocSignalRequest{Signal: "usr1"}, nil)
	waitUntil(t, "the second SIGUSR1", func() bool { return catAlloc(t, a, alloc, "alloc/signals") == "usr1\nusr1\n" })

	callOK(t, "PUT", url+"/restart", api.AllocationRestartRequest{TaskName: "app"}, nil)
	var pids []string
	waitUntil(t, "a new process", func() bool {
		pids = strings.Fields(catAlloc(t, a, alloc, "alloc/pids"))
		return len(pids) == 2
	})
	if pids[0] != firstPid || pids[1] == firstPid {
		t.Fatalf("pids %v: want a new process after %s", pids, firstPid)
	}
	waitUntil(t, "the restart to be reported", func() bool {
		s, status := taskState(t, a, alloc, "app")
		return s != nil && s.Restarts == 1 && s.State == structs.TaskStateRunning && status == structs.AllocClientStatusRunning &&
			hasEvent(s, taskrunner.TaskRestartSignal)
	})

	for _, tc := range []struct {
		path string
		body any
		code int
		want string
	}{
		{"/restart", api.AllocationRestartRequest{TaskName: "nope"}, 404, `unknown task "nope"`},
		{"/signal", api.AllocSignalRequest{Task: "nope", Signal: "SIGHUP"}, 404, `unknown task "nope"`},
		{"/signal", api.AllocSignalRequest{Task: "app", Signal: "SIGNOPE"}, 400, "SIGUSR1"},
		{"/gc", nil, 409, "stop it first"},
	} {
		resp, body := call(t, "PUT", url+tc.path, tc.body)
		requireStatus(t, resp, body, tc.code, tc.want)
	}
	resp, body := call(t, "PUT", a.URL+"/v1/client/allocation/"+structs.GenerateUUID()+"/restart", nil)
	requireStatus(t, resp, body, 404, "not found")
}

func TestAllocDirReadsStayInsideTheAllocDir(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	registerJob(t, a, shellJob("files", signalScript))
	alloc := waitRunning(t, a, "files").ID
	waitUntil(t, "the task's files", func() bool { return catAlloc(t, a, alloc, "app/local/hello.txt") == "hello\n" })
	fs := a.URL + "/v1/client/fs/"

	var root []api.AllocFileInfo
	callOK(t, "GET", fs+"ls/"+alloc, nil, &root)
	if len(root) != 2 || root[0].Name != "alloc" || root[1].Name != "app" || !root[0].IsDir || root[0].FileMode[0] != 'd' {
		t.Fatalf("ls /: %+v", root)
	}
	var local []api.AllocFileInfo
	callOK(t, "GET", fs+"ls/"+alloc+"?path=/app/local", nil, &local)
	names := []string{}
	for _, f := range local {
		names = append(names, f.Name+":"+f.FileMode[:1])
	}
	if strings.Join(names, ",") != "etc-link:L,hello.txt:-,up:L" {
		t.Fatalf("ls /app/local: %v", names)
	}
	var st api.AllocFileInfo
	callOK(t, "GET", fs+"stat/"+alloc+"?path=app/local/hello.txt", nil, &st)
	if st.Name != "hello.txt" || st.Size != 6 || st.IsDir || !strings.HasPrefix(st.ContentType, "text/plain") || st.ModTime.IsZero() {
		t.Fatalf("stat: %+v", st)
	}
	resp, body := call(t, "GET", fs+"readat/"+alloc+"?path=app/local/hello.txt&offset=1&limit=3", nil)
	requireStatus(t, resp, body, 200, "ell")
	if string(body) != "ell" {
		t.Fatalf("readat: %q", body)
	}

	for _, tc := range []struct {
		op, path string
		code     int
		want     string
	}{
		{"cat", "../", 400, "escapes the alloc directory"},
		{"ls", "app/../..", 400, "escapes the alloc directory"},
		{"cat", "app/local/etc-link/passwd", 400, "escapes the alloc directory"},
		{"stat", "app/local/etc-link", 400, "escapes the alloc directory"},
		{"ls", "app/local/up", 400, "escapes the alloc directory"},
		// A path is judged by where it ends: out through a symlink and
		// back in again is inside.
		{"readat", "app/local/up/" + alloc + "/app/local/hello.txt", 200, "hello"},
		{"cat", "alloc/logs/.app.stdout.fifo", 400, "not a regular file"},
		{"cat", "app", 400, "list it instead"},
		{"ls", "app/local/hello.txt", 400, "not a directory"},
		{"stat", "app/nothing", 404, "no such file"},
		{"cat", "/etc/passwd", 404, "no such file"},
	} {
		resp, body := call(t, "GET", fs+tc.op+"/"+alloc+"?path="+tc.path, nil)
		requireStatus(t, resp, body, tc.code, tc.want)
	}
}

func TestGCOfAFinishedAllocAndHostStats(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	registerJob(t, a, mockJob("gc", 1))
	alloc := waitRunning(t, a, "gc").ID
	gc := a.URL + "/v1/client/allocation/" + alloc + "/gc"
	resp, body := call(t, "GET", gc, nil)
	requireStatus(t, resp, body, 409, "is running; stop it first")
	callOK(t, "GET", a.URL+"/v1/client/fs/ls/"+alloc, nil, nil)

	callOK(t, "DELETE", a.URL+"/v1/job/gc", nil, nil)
	// The alloc is terminal once its task is dead and the runner done.
	waitUntil(t, "the stopped alloc to be collected", func() bool {
		resp, body := call(t, "GET", gc, nil)
		if resp.StatusCode == 409 {
			return false
		}
		// An empty body, as Nomad's agent answers and its client's
		// Nodes().GcAlloc expects.
		requireStatus(t, resp, body, 200, "")
		if len(body) != 0 || resp.ContentLength != 0 {
			t.Fatalf("gc answered %q (Content-Length %d), want an empty body", body, resp.ContentLength)
		}
		return true
	})
	resp, body = call(t, "GET", a.URL+"/v1/client/fs/ls/"+alloc, nil)
	requireStatus(t, resp, body, 404, "unknown allocation")
	resp, body = call(t, "GET", gc, nil)
	requireStatus(t, resp, body, 404, "unknown allocation")

	for _, q := range []string{"", "?node_id=" + a.NodeID()} {
		var raw map[string]any
		callOK(t, "GET", a.URL+"/v1/client/stats"+q, nil, &raw)
		for _, k := range []string{"Memory", "CPU", "DiskStats", "AllocDirStats", "DeviceStats", "Uptime", "CPUTicksConsumed", "Timestamp"} {
			if raw[k] == nil {
				t.Fatalf("stats%s: %s is null: %v", q, k, raw)
			}
		}
		var st api.HostStats
		callOK(t, "GET", a.URL+"/v1/client/stats"+q, nil, &st)
		if st.Memory.Total == 0 || len(st.CPU) == 0 || st.CPU[0].CPU != "cpu0" || st.AllocDirStats.Size == 0 || st.Uptime == 0 || st.Timestamp == 0 {
			t.Fatalf("stats%s: %+v", q, st)
		}
	}
	resp, body = call(t, "GET", a.URL+"/v1/client/stats?node_id="+structs.GenerateUUID(), nil)
	requireStatus(t, resp, body, 404, "not found")
}

func TestActionsAskedOfAnotherAgentReachTheAllocsNode(t *testing.T) {
	t.Parallel()
	srv := NewTestAgent(t, nil)
	cli := NewTestAgent(t, func(c *config.Config) {
		c.Server.Enabled = false
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Client.Meta = map[string]string{"role": "worker"}
	})
	job := mockJob("remote", 1)
	job.Constraints = []*api.Constraint{{LTarget: "${meta.role}", RTarget: "worker", Operand: "="}}
	registerJob(t, srv, job)
	alloc := waitRunning(t, srv, "remote")
	if alloc.NodeID != cli.NodeID() {
		t.Fatalf("alloc on %s, want the worker %s", alloc.NodeID, cli.NodeID())
	}
	// Asked of the server's agent: the body must travel with the request.
	callOK(t, "PUT", srv.URL+"/v1/client/allocation/"+alloc.ID+"/restart", api.AllocationRestartRequest{TaskName: "app"}, nil)
	waitUntil(t, "the worker's task to restart", func() bool {
		s, _ := taskState(t, srv, alloc.ID, "app")
		return s != nil && s.Restarts == 1 && s.State == structs.TaskStateRunning
	})
	resp, body := call(t, "PUT", srv.URL+"/v1/client/allocation/"+alloc.ID+"/restart", api.AllocationRestartRequest{TaskName: "nope"})
	requireStatus(t, resp, body, 404, `unknown task "nope"`)
	var files []api.AllocFileInfo
	callOK(t, "GET", srv.URL+"/v1/client/fs/ls/"+alloc.ID+"?path=app", nil, &files)
	if len(files) != 3 {
		t.Fatalf("ls app on the worker: %+v", files)
	}
	var st api.HostStats
	callOK(t, "GET", srv.URL+"/v1/client/stats?node_id="+cli.NodeID(), nil, &st)
	if st.AllocDirStats == nil || !strings.HasPrefix(st.AllocDirStats.Mountpoint, "/") {
		t.Fatalf("the worker's stats: %+v", st)
	}
	// A signal the mock driver cannot deliver is refused by the worker.
	resp, body = call(t, "PUT", srv.URL+"/v1/client/allocation/"+alloc.ID+"/signal", api.AllocSignalRequest{Signal: "SIGHUP"})
	requireStatus(t, resp, body, http.StatusBadRequest, "does not support signals")
}
