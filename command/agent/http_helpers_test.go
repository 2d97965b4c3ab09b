package agent

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/command/agent/internal/apitest"
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

// The HTTP client side of the tests is shared with the HTTP API's own
// (command/agent/internal/apitest); these are its short names here.
var (
	call          = apitest.Call
	callOK        = apitest.CallOK
	requireStatus = apitest.RequireStatus
	index         = apitest.Index
	mockJob       = apitest.MockJob
	richNomadJob  = apitest.RichNomadJob
	openStream    = apitest.OpenStream
)

func ptr[T any](v T) *T { return &v }

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
