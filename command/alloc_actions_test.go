package command

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/google/go-cmp/cmp"
)

// allocAgent is a fake agent that knows allocJSON's allocation (task
// "server").
func allocAgent(t *testing.T) *fakeAgent {
	f := newFakeAgent(t).json("GET /v1/allocations", `[{"ID":"`+allocID+`"}]`)
	return f.json("GET /v1/allocation/"+allocID, allocJSON())
}

func decodedBody(t *testing.T, r request, out any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), out); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

func TestAllocRestart(t *testing.T) {
	f := allocAgent(t).json("PUT /v1/client/allocation/"+allocID+"/restart", "{}")
	res := runCLI(t, f, "", "alloc", "restart", "a1b2", "server")
	if res.code != 0 || res.stdout != "Restarted task \"server\" of allocation \"a1b2c3d4\"\n" {
		t.Fatalf("exit %d stdout %q stderr %q", res.code, res.stdout, res.stderr)
	}
	var req api.AllocationRestartRequest
	decodedBody(t, f.requests("PUT /v1/client/allocation/" + allocID + "/restart")[0], &req)
	if req != (api.AllocationRestartRequest{TaskName: "server"}) {
		t.Fatalf("request %+v", req)
	}

	res = runCLI(t, f, "", "alloc", "restart", "a1b2")
	if res.code != 0 || !strings.Contains(res.stdout, "Restarted the running tasks") {
		t.Fatalf("all tasks: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
	decodedBody(t, f.requests("PUT /v1/client/allocation/" + allocID + "/restart")[1], &req)
	if req.TaskName != "" {
		t.Fatalf("request %+v", req)
	}

	// A task the allocation does not have is refused before asking.
	res = runCLI(t, f, "", "alloc", "restart", "a1b2", "nope")
	if res.code != 1 || !strings.Contains(res.stderr, `has no task "nope"; its tasks are: server`) {
		t.Fatalf("unknown task: exit %d %q", res.code, res.stderr)
	}
	res = runCLI(t, f, "", "alloc", "restart", "-all-tasks", "a1b2", "server")
	if res.code != 1 || !strings.Contains(res.stderr, "-all-tasks") {
		t.Fatalf("-all-tasks with a task: exit %d %q", res.code, res.stderr)
	}
	if n := len(f.requests("PUT /v1/client/allocation/" + allocID + "/restart")); n != 2 {
		t.Fatalf("%d restarts sent, want 2", n)
	}

	f.on("PUT /v1/client/allocation/"+allocID+"/restart", reply{status: 409, body: `task is not running: task "server" is dead`})
	res = runCLI(t, f, "", "alloc", "restart", "-task=server", "a1b2")
	if res.code != 1 || !strings.Contains(res.stderr, "Error restarting allocation") || !strings.Contains(res.stderr, "is dead") {
		t.Fatalf("refused restart: exit %d %q", res.code, res.stderr)
	}
}

func TestAllocSignal(t *testing.T) {
	f := allocAgent(t).json("PUT /v1/client/allocation/"+allocID+"/signal", "{}")
	for _, tc := range []struct {
		args []string
		want api.AllocSignalRequest
	}{
		{[]string{"-s", "SIGHUP", "a1b2", "server"}, api.AllocSignalRequest{Task: "server", Signal: "SIGHUP"}},
		{[]string{"-s=usr1", "-task", "server", "a1b2"}, api.AllocSignalRequest{Task: "server", Signal: "usr1"}},
		{[]string{"a1b2"}, api.AllocSignalRequest{Signal: "SIGKILL"}},
	} {
		res := runCLI(t, f, "", append([]string{"alloc", "signal"}, tc.args...)...)
		if res.code != 0 || res.stdout != "" {
			t.Fatalf("%v: exit %d %q %q", tc.args, res.code, res.stdout, res.stderr)
		}
		reqs := f.requests("PUT /v1/client/allocation/" + allocID + "/signal")
		var got api.AllocSignalRequest
		decodedBody(t, reqs[len(reqs)-1], &got)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Fatalf("%v: sent (-want +got):\n%s", tc.args, diff)
		}
	}
	f.on("PUT /v1/client/allocation/"+allocID+"/signal", reply{status: 400, body: `Signal "SIGFOO" is not a signal Drover can send: use one of SIGABRT, SIGHUP`})
	res := runCLI(t, f, "", "alloc", "signal", "-s", "SIGFOO", "a1b2")
	if res.code != 1 || !strings.Contains(res.stderr, "use one of SIGABRT") {
		t.Fatalf("bad signal: exit %d %q", res.code, res.stderr)
	}
}

func TestAllocFSListsDirectoriesAndPrintsFiles(t *testing.T) {
	mod := time.Date(2024, 5, 1, 11, 0, 0, 0, time.UTC)
	modJSON, _ := json.Marshal(mod)
	f := allocAgent(t)
	f.json("GET /v1/client/fs/stat/"+allocID, `{"Name":"`+allocID+`","IsDir":true,"FileMode":"drwxr-xr-x","Size":4096,"ModTime":`+string(modJSON)+`}`)
	f.json("GET /v1/client/fs/ls/"+allocID, `[{"Name":"alloc","IsDir":true,"FileMode":"drwxr-xr-x","Size":4096,"ModTime":`+string(modJSON)+`},
		{"Name":"big.bin","FileMode":"-rw-r--r--","Size":3145728,"ModTime":`+string(modJSON)+`}]`)
	res := runCLI(t, f, "", "alloc", "fs", "a1b2")
	if res.code != 0 {
		t.Fatalf("exit %d %q", res.code, res.stderr)
	}
	wantLines(t, res.stdout, "Mode        Size     Modified Time", "Name",
		"drwxr-xr-x  4096     "+formatTime(mod)+"  alloc/",
		"-rw-r--r--  3145728  "+formatTime(mod)+"  big.bin")
	if q := f.requests("GET /v1/client/fs/ls/" + allocID)[0].query; q.Get("path") != "/" {
		t.Fatalf("ls query %v", q)
	}
	res = runCLI(t, f, "", "alloc", "fs", "-H", "a1b2", "/")
	wantLines(t, res.stdout, "4.0 KiB", "alloc/", "3.0 MiB", "big.bin")

	// A file is printed, or described with -stat.
	f.json("GET /v1/client/fs/stat/"+allocID, `{"Name":"hello.txt","FileMode":"-rw-r--r--","Size":6,"ModTime":`+string(modJSON)+`}`)
	f.json("GET /v1/client/fs/cat/"+allocID, "hello\n")
	res = runCLI(t, f, "", "alloc", "fs", "a1b2", "web/local/hello.txt")
	if res.code != 0 || res.stdout != "hello\n" {
		t.Fatalf("cat: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
	if q := f.requests("GET /v1/client/fs/cat/" + allocID)[0].query; q.Get("path") != "web/local/hello.txt" {
		t.Fatalf("cat query %v", q)
	}
	res = runCLI(t, f, "", "alloc", "fs", "-stat", "a1b2", "web/local/hello.txt")
	wantLines(t, res.stdout, "Mode", "-rw-r--r--  6     "+formatTime(mod)+"  hello.txt")
	if n := len(f.requests("GET /v1/client/fs/cat/" + allocID)); n != 1 {
		t.Fatalf("-stat read the file (%d reads)", n)
	}

	f.on("GET /v1/client/fs/stat/"+allocID, reply{status: 400, body: `"../x": path escapes the alloc directory`})
	res = runCLI(t, f, "", "alloc", "fs", "a1b2", "../x")
	if res.code != 1 || !strings.Contains(res.stderr, "escapes the alloc directory") {
		t.Fatalf("escape: exit %d %q", res.code, res.stderr)
	}
}

// shellJobHCL runs a shell script with raw_exec; the script records its
// pid and SIGUSR1 in the shared alloc dir.
const shellJobHCL = `
job "acts" {
  group "acts" {
    task "app" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $$ >> $NOMAD_ALLOC_DIR/pids; trap 'echo usr1 >> $NOMAD_ALLOC_DIR/signals' USR1; while :; do sleep 0.2; done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`

// TestAllocActionsAgainstADevAgent signals, restarts and reads an
// allocation of a real dev agent through the CLI.
func TestAllocActionsAgainstADevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	skipWithoutAgent(t, nil)
	ta := agenttest.New(t, nil)
	addr := "-address=" + ta.URL
	if res := runCLI(t, nil, "", "job", "run", "-detach", addr, writeJob(t, shellJobHCL)); res.code != 0 {
		t.Fatalf("job run: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	client, err := api.NewClient(&api.Config{Address: ta.URL, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	allocID := waitForRunningAlloc(t, client, "acts")
	cat := func(path string) string {
		return runCLI(t, nil, "", "alloc", "fs", addr, allocID, path).stdout
	}
	waitFor(t, "the task's pid", func() bool { return len(strings.Fields(cat("alloc/pids"))) == 1 })

	if res := runCLI(t, nil, "", "alloc", "signal", addr, "-s", "SIGUSR1", allocID[:8], "app"); res.code != 0 {
		t.Fatalf("alloc signal: exit %d %s", res.code, res.stderr)
	}
	waitFor(t, "the task to record SIGUSR1", func() bool { return cat("alloc/signals") == "usr1\n" })

	res := runCLI(t, nil, "", "alloc", "restart", addr, allocID[:8])
	if res.code != 0 || !strings.Contains(res.stdout, "Restarted the running tasks") {
		t.Fatalf("alloc restart: exit %d %s%s", res.code, res.stdout, res.stderr)
	}
	waitFor(t, "a second process", func() bool { return len(strings.Fields(cat("alloc/pids"))) == 2 })
	if pids := strings.Fields(cat("alloc/pids")); pids[0] == pids[1] {
		t.Fatalf("the restart kept pid %s", pids[0])
	}

	res = runCLI(t, nil, "", "alloc", "fs", addr, allocID)
	wantLines(t, res.stdout, "Mode", "Name", "alloc/", "app/")
	res = runCLI(t, nil, "", "alloc", "fs", addr, "-stat", allocID, "alloc/pids")
	wantLines(t, res.stdout, "-rw-", "pids")
	res = runCLI(t, nil, "", "alloc", "fs", addr, allocID, "app/../..")
	if res.code != 1 || !strings.Contains(res.stderr, "escapes the alloc directory") {
		t.Fatalf("escape: exit %d %q", res.code, res.stderr)
	}
	res = runCLI(t, nil, "", "alloc", "signal", addr, "-s", "SIGNOPE", allocID)
	if res.code != 1 || !strings.Contains(res.stderr, "SIGUSR1") {
		t.Fatalf("bad signal: exit %d %q", res.code, res.stderr)
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	wait.Until(t, 20*time.Second, what, cond, wait.Every(20*time.Millisecond))
}
