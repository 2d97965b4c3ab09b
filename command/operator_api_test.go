package command

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/agenttest"
	"github.com/drover-sched/drover/command/agent/config"
)

func apiTestJob(id string) string {
	count, cpu, mem := 1, 100, 64
	name := "web"
	job := api.JobRegisterRequest{Job: &api.Job{ID: &id, Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{Name: &name, Count: &count,
			Tasks: []*api.Task{{Name: "app", Driver: "mock_driver", Config: map[string]any{"run_for": "1h"},
				Resources: &api.Resources{CPU: &cpu, MemoryMB: &mem}}}}}}}
	buf, _ := json.Marshal(job)
	return string(buf)
}

func TestOperatorAPIAgainstAnAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	serverOnly := func(c *config.Config) { c.Client.Enabled = false }
	skipWithoutAgent(t, serverOnly)
	ta := agenttest.New(t, serverOnly)
	addr := "-address=" + ta.URL

	// A body from stdin, PUT.
	res := runCLI(t, nil, apiTestJob("web"), "operator", "api", addr, "-X", "PUT", "-d", "@-", "/v1/jobs")
	if res.code != 0 || !strings.Contains(res.stdout, `"EvalID"`) {
		t.Fatalf("register: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// GET, with the path as a full URL of the agent.
	res = runCLI(t, nil, "", "operator", "api", addr, ta.URL+"/v1/job/web")
	var job api.Job
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &job) != nil || *job.ID != "web" {
		t.Fatalf("get: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// -filter and -verbose.
	res = runCLI(t, nil, "", "operator", "api", addr, "-verbose", "-filter", `ID == "nope"`, "/v1/jobs")
	if res.code != 0 || strings.TrimSpace(res.stdout) != "[]" || !strings.Contains(res.stderr, "< 200 OK") || !strings.Contains(res.stderr, "< X-Nomad-Index:") {
		t.Fatalf("filtered list: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// An error status: the body goes to stderr, exit 1.
	res = runCLI(t, nil, "", "operator", "api", addr, "/v1/job/missing")
	if res.code != 1 || res.stdout != "" || !strings.Contains(res.stderr, "404") || !strings.Contains(res.stderr, "not found") {
		t.Fatalf("missing job: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// A URL of another agent is refused rather than silently redirected.
	res = runCLI(t, nil, "", "operator", "api", addr, "http://10.0.0.1:4646/v1/jobs")
	if res.code != 1 || !strings.Contains(res.stderr, "names another agent") {
		t.Fatalf("other agent: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}

// lockedBuffer is a bytes.Buffer that a command writes while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestOperatorAPIFollowsTheEventStream: `drover operator api
// /v1/event/stream` prints frames as they happen, and ends cleanly when
// interrupted.
func TestOperatorAPIFollowsTheEventStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real agent")
	}
	serverOnly := func(c *config.Config) { c.Client.Enabled = false }
	skipWithoutAgent(t, serverOnly)
	ta := agenttest.New(t, serverOnly)

	var stdout, stderr lockedBuffer
	m := newMeta(&stdout, &stderr)
	m.getenv = func(string) string { return "" }
	m.environ = func() []string { return nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.ctx = ctx
	code := make(chan int, 1)
	go func() {
		c, _ := runVerbMeta(m, []string{"operator", "api", "-address=" + ta.URL, "/v1/event/stream?topic=Job:streamed"})
		code <- c
	}()

	res := runCLI(t, nil, apiTestJob("streamed"), "operator", "api", "-address="+ta.URL, "-X", "PUT", "-d", "-", "/v1/jobs")
	if res.code != 0 {
		t.Fatalf("register: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stdout.String(), `"Type":"JobRegistered","Key":"streamed"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no JobRegistered frame for the job within 60s; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
		select {
		case c := <-code:
			t.Fatalf("the stream ended with exit %d: %s", c, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	line := strings.SplitN(stdout.String(), "\n", 2)[0]
	var frame struct {
		Index  uint64
		Events []map[string]any
	}
	if err := json.Unmarshal([]byte(line), &frame); err != nil || frame.Index == 0 || len(frame.Events) != 1 {
		t.Fatalf("first line %q is not one frame: %v", line, err)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("interrupted stream: exit %d: %s", c, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the command did not end when interrupted")
	}
}

func TestOperatorAPIFlags(t *testing.T) {
	res := runCLI(t, nil, "", "operator", "api", "-address=http://127.0.0.1:1", "-H", "bad header", "/v1/jobs")
	if res.code != 1 || !strings.Contains(res.stderr, `a header is "Name: value"`) {
		t.Fatalf("bad header: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLI(t, nil, "", "operator", "api", "-address=http://127.0.0.1:1")
	if res.code != 1 || !strings.Contains(res.stderr, "takes one argument") {
		t.Fatalf("no path: exit %d\n%s", res.code, res.stderr)
	}
	res = runCLI(t, nil, "", "operator", "api", "-address=http://127.0.0.1:1", "-token=s3cret", "-dryrun",
		"-H", "X-Test: it's", "-d", `{"a":1}`, "/v1/jobs?prefix=w")
	want := `curl -X POST -H 'X-Test: it'\''s' -H 'X-Nomad-Token: s3cret' --data-binary '{"a":1}' 'http://127.0.0.1:1/v1/jobs?prefix=w'`
	if res.code != 0 || strings.TrimSpace(res.stdout) != want {
		t.Fatalf("dryrun: exit %d\n%s\nwant\n%s", res.code, res.stdout, want)
	}
}
