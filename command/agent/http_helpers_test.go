package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// serverAgent starts a test agent with only a server: nodes are
// registered by the test itself (registerNode), so allocations can exist
// without any task running.
func serverAgent(t *testing.T) *TestAgent {
	t.Helper()
	return NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
}

// call sends a request with an optional JSON body and returns the
// response and its body.
func call(t *testing.T, method, url string, body any) (*http.Response, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, out
}

// callOK is call that requires a 200 and decodes the answer into out.
func callOK(t *testing.T, method, url string, body, out any) *http.Response {
	t.Helper()
	resp, raw := call(t, method, url, body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: status %d: %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decoding %s: %v", method, url, raw, err)
		}
	}
	return resp
}

// requireStatus checks a status code and that the body mentions want.
func requireStatus(t *testing.T, resp *http.Response, body []byte, code int, want string) {
	t.Helper()
	if resp.StatusCode != code {
		t.Fatalf("want status %d, got %d: %s", code, resp.StatusCode, body)
	}
	if !strings.Contains(string(body), want) {
		t.Fatalf("body %q should mention %q", body, want)
	}
}

func index(t *testing.T, resp *http.Response) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(resp.Header.Get("X-Nomad-Index"), 10, 64)
	if err != nil {
		t.Fatalf("bad X-Nomad-Index %q", resp.Header.Get("X-Nomad-Index"))
	}
	return n
}

// registerNode registers a ready mock node (healthy mock_driver) through
// the RPC a client uses.
func registerNode(t *testing.T, a *TestAgent, mutate func(*structs.Node)) *structs.Node {
	t.Helper()
	n := feasible.MockNode()
	if mutate != nil {
		mutate(n)
	}
	var out structs.NodeUpdateResponse
	if err := a.RPC("Node.Register", &structs.NodeRegisterRequest{Node: n, WriteRequest: structs.WriteRequest{Region: "global"}}, &out); err != nil {
		t.Fatalf("registering node: %v", err)
	}
	return n
}

// mockJob is a service job for the mock driver.
func mockJob(id string, count int) *api.Job {
	return &api.Job{
		ID: &id, Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{
			Name: ptr("web"), Count: &count,
			Tasks: []*api.Task{{Name: "app", Driver: "mock_driver", Config: map[string]any{"run_for": "1h"},
				Resources: &api.Resources{CPU: ptr(100), MemoryMB: ptr(64)}}},
		}},
	}
}

func registerJob(t *testing.T, a *TestAgent, job *api.Job) structs.JobRegisterResponse {
	t.Helper()
	var out structs.JobRegisterResponse
	callOK(t, http.MethodPut, a.URL+"/v1/jobs", api.JobRegisterRequest{Job: job}, &out)
	return out
}

// waitUntil polls cond (an HTTP read, typically) until it holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitUntilWithin(t, 20*time.Second, what, cond)
}

// waitUntilWithin is waitUntil for work that takes longer (megabytes
// through raft and the client's state, on a loaded machine).
func waitUntilWithin(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	wait.Until(t, limit, what, cond, wait.Every(20*time.Millisecond))
}

func decodeJSON(resp *http.Response, out any) error {
	return json.NewDecoder(resp.Body).Decode(out)
}
