package agent

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/structs"
)

// loggedJob is a mock job that prints a line and keeps running.
func loggedJob(id, line string) *api.Job {
	job := mockJob(id, 1)
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "1h", "stdout_string": line}
	return job
}

func waitRunning(t *testing.T, a *TestAgent, jobID string) *structs.AllocListStub {
	t.Helper()
	var allocs []*structs.AllocListStub
	waitUntil(t, jobID+" running", func() bool {
		callOK(t, "GET", a.URL+"/v1/job/"+jobID+"/allocations", nil, &allocs)
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	return allocs[0]
}

func TestDevAgentRunsAJobAndServesItsLogs(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	if a.NodeID() == "" || a.RPCAddr() == "" {
		t.Fatal("dev agent must run a server and a client")
	}
	registerJob(t, a, loggedJob("hello", "hello drover\n"))
	alloc := waitRunning(t, a, "hello")
	if alloc.NodeID != a.NodeID() {
		t.Fatalf("alloc on %s, want the dev node %s", alloc.NodeID, a.NodeID())
	}

	var body []byte
	waitUntil(t, "the task's output", func() bool {
		var resp *http.Response
		resp, body = call(t, "GET", a.URL+"/v1/client/fs/logs/"+alloc.ID+"?task=app&type=stdout&plain=true", nil)
		return resp.StatusCode == 200 && strings.Contains(string(body), "hello drover")
	})
	var stats map[string]any
	callOK(t, "GET", a.URL+"/v1/client/allocation/"+alloc.ID+"/stats", nil, &stats)
	if stats["Tasks"] == nil {
		t.Fatalf("stats: %v", stats)
	}
	resp, raw := call(t, "GET", a.URL+"/v1/client/fs/logs/"+alloc.ID+"?task=nope&type=stdout", nil)
	requireStatus(t, resp, raw, 404, "unknown task")

	var node structs.Node
	callOK(t, "GET", a.URL+"/v1/node/"+a.NodeID(), nil, &node)
	if node.HTTPAddr != a.Addr {
		t.Fatalf("the node must register the agent's HTTP address %s, got %q", a.Addr, node.HTTPAddr)
	}
	var self struct{ Stats map[string]map[string]string }
	callOK(t, "GET", a.URL+"/v1/agent/self", nil, &self)
	if self.Stats["client"]["node_id"] != a.NodeID() {
		t.Fatalf("self stats: %v", self.Stats)
	}
	var health map[string]map[string]any
	callOK(t, "GET", a.URL+"/v1/agent/health", nil, &health)
	if health["client"]["ok"] != true || health["server"]["ok"] != true {
		t.Fatalf("health: %v", health)
	}
}

func TestClientOnlyAgentJoinsAndLogsAreForwarded(t *testing.T) {
	t.Parallel()
	srv := NewTestAgent(t, nil)
	cli := NewTestAgent(t, func(c *config.Config) {
		c.Server.Enabled = false
		c.Client.Servers = []string{srv.RPCAddr()}
		c.Client.Meta = map[string]string{"role": "worker"}
	})
	if cli.RPCAddr() != "" {
		t.Fatal("a client-only agent has no RPC address")
	}
	// The client-only agent answers API reads through the server.
	var nodes []*structs.NodeListStub
	callOK(t, "GET", cli.URL+"/v1/nodes", nil, &nodes)
	if len(nodes) != 2 {
		t.Fatalf("want 2 nodes through the client-only agent, got %d", len(nodes))
	}

	job := loggedJob("remote", "from the worker\n")
	job.Constraints = []*api.Constraint{{LTarget: "${meta.role}", RTarget: "worker", Operand: "="}}
	registerJob(t, cli, job)
	alloc := waitRunning(t, srv, "remote")
	if alloc.NodeID != cli.NodeID() {
		t.Fatalf("alloc on %s, want the worker %s", alloc.NodeID, cli.NodeID())
	}
	// Asked of the server's agent, whose client does not run the alloc.
	waitUntil(t, "forwarded logs", func() bool {
		resp, body := call(t, "GET", srv.URL+"/v1/client/fs/logs/"+alloc.ID+"?task=app&type=stdout&plain=true", nil)
		return resp.StatusCode == 200 && strings.Contains(string(body), "from the worker")
	})
}

// freePort returns a port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer safe for the agent's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRunReloadsOnSIGHUPAndShutsDownOnSIGINT(t *testing.T) {
	dir := t.TempDir()
	httpPort, rpcPort := freePort(t), freePort(t)
	path := filepath.Join(dir, "agent.hcl")
	write := func(level string) {
		src := fmt.Sprintf(`
data_dir  = %q
bind_addr = "127.0.0.1"
log_level = %q
ports {
  http = %d
  rpc  = %d
}
server {
  enabled          = true
  bootstrap_expect = 1
}
client {
  enabled = true
}
plugin "mock_driver" {}
telemetry { prometheus_metrics = true }
`, filepath.Join(dir, "data"), level, httpPort, rpcPort)
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("info")

	var stdout, stderr syncBuffer
	signals := make(chan os.Signal, 1)
	code := make(chan int, 1)
	go func() { code <- Run([]string{"-config", path}, "9.9.9", &stdout, &stderr, signals) }()

	url := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	level := func() string {
		resp, err := http.Get(url + "/v1/agent/self")
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		var self struct{ Config map[string]any }
		if resp.StatusCode != 200 || decodeJSON(resp, &self) != nil {
			return ""
		}
		return fmt.Sprint(self.Config["LogLevel"])
	}
	waitUntil(t, "the agent to serve", func() bool {
		select {
		case c := <-code:
			t.Fatalf("Run exited with %d: %s", c, stderr.String())
		default:
		}
		// The agent serves HTTP from inside NewAgent and Run prints the
		// banner (in one write) just after, so wait for both.
		return level() == "info" && strings.Contains(stdout.String(), "==> Drover agent configuration")
	})
	out := stdout.String()
	for _, want := range []string{"Drover agent configuration", "Version: 9.9.9", "Server: true", "Client: true", "global (DC: dc1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("banner lacks %q:\n%s", want, out)
		}
	}
	// The file's telemetry block is applied: Prometheus metrics are served.
	if resp, err := http.Get(url + "/v1/metrics?format=prometheus"); err != nil || resp.StatusCode != 200 {
		t.Errorf("telemetry { prometheus_metrics = true } from the file is not applied: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	write("debug")
	signals <- syscall.SIGHUP
	waitUntil(t, "the reloaded log level", func() bool { return level() == "debug" })

	signals <- syscall.SIGINT
	if c := <-code; c != 0 {
		t.Fatalf("Run exited with %d after SIGINT: %s", c, stderr.String())
	}
	if _, err := http.Get(url + "/v1/agent/self"); err == nil {
		t.Fatal("the HTTP API still answers after shutdown")
	}
}

func TestRunRejectsBadConfigWithPositions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.hcl")
	os.WriteFile(path, []byte("server {\n  enabled = true\n  heartbeat_grace = \"ten seconds\"\n}\n"), 0o600)
	var stdout, stderr syncBuffer
	if code := Run([]string{"-config", path, "-data-dir", t.TempDir()}, "0", &stdout, &stderr, nil); code != 1 {
		t.Fatalf("exit code %d", code)
	}
	if !strings.Contains(stderr.String(), path+":3:21: server.heartbeat_grace") {
		t.Fatalf("stderr: %s", stderr.String())
	}
}
