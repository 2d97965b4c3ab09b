package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/structs"
)

// bigMeta is close to the default job_max_source_size (1 MB): 20 jobs
// with it make any list of them larger than one RPC message.
const bigMeta = 950_000

func bigJob(id string, count int) *api.Job {
	job := mockJob(id, count)
	job.Meta = map[string]string{"blob": strings.Repeat(id[len(id)-1:], bigMeta)}
	job.TaskGroups[0].Tasks[0].Resources = &api.Resources{CPU: ptr(10), MemoryMB: ptr(10)}
	return job
}

// steadyRaft gives a test cluster raft's default timings: the tests'
// fast ones let a loaded machine, replicating megabytes, lose the leader.
func steadyRaft(c *config.Config) {
	c.ServerHook = func(sc *nomad.Config) { sc.RaftConfig = raft.DefaultConfig() }
}

// joinedServer is a server-only agent that joins leader's cluster.
func joinedServer(t *testing.T, leader *TestAgent) *TestAgent {
	return NewTestAgent(t, func(c *config.Config) {
		steadyRaft(c)
		c.DevMode = false
		c.Client.Enabled = false
		c.Server.BootstrapExpect = 0
		c.Server.ServerJoin.RetryJoin = []string{leader.RPCAddr()}
	})
}

// registerAnywhere registers job through the first of agents that
// takes it (any server forwards to the leader, wherever it is now).
func registerAnywhere(t *testing.T, job *api.Job, agents ...*TestAgent) {
	t.Helper()
	waitUntilWithin(t, time.Minute, "job "+*job.ID+" registered", func() bool {
		for _, a := range agents {
			resp, _ := call(t, http.MethodPut, a.URL+"/v1/jobs", api.JobRegisterRequest{Job: job})
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		return false
	})
}

// listJobs reads GET /v1/jobs from a and checks that every job is there
// with its meta whole.
func listJobs(t *testing.T, a *TestAgent, n int) {
	t.Helper()
	var jobs []*structs.JobListStub
	_, body := getThroughElections(t, a.URL+"/v1/jobs")
	if err := json.Unmarshal(body, &jobs); err != nil {
		t.Fatalf("%s: decoding the job list: %v", a.Addr, err)
	}
	if len(jobs) != n {
		t.Fatalf("%s: %d jobs listed, want %d", a.Addr, len(jobs), n)
	}
	for i, j := range jobs {
		if want := fmt.Sprintf("big-%02d", i); j.ID != want || len(j.Meta["blob"]) != bigMeta {
			t.Fatalf("%s: job %d is %s with %d bytes of meta, want %s with %d", a.Addr, i, j.ID, len(j.Meta["blob"]), want, bigMeta)
		}
	}
}

// getThroughElections GETs url until it answers 200, retrying only while
// the cluster has no leader: three servers replicating 19 MB on a loaded
// machine may hold an election, and this test is about paging.
func getThroughElections(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	var resp *http.Response
	var body []byte
	waitUntilWithin(t, time.Minute, "GET "+url+" answered", func() bool {
		resp, body = call(t, http.MethodGet, url, nil)
		if resp.StatusCode == http.StatusOK {
			return true
		}
		if !strings.Contains(string(body), "leader") {
			t.Fatalf("GET %s: status %d: %s", url, resp.StatusCode, body)
		}
		return false
	})
	return resp, body
}

// TestListsLargerThanOneMessageCrossTheNetworkInPages lists 20 jobs with
// ~1 MB of meta each (19 MB, over the 16 MiB RPC message limit) through a
// follower of a three-server cluster, which forwards Job.List to the
// leader, and through a client-only agent, which asks a server over RPC.
// Both see every job whole.
func TestListsLargerThanOneMessageCrossTheNetworkInPages(t *testing.T) {
	t.Parallel()
	leader := NewTestAgent(t, func(c *config.Config) { steadyRaft(c); c.Client.Enabled = false })
	f1, f2 := joinedServer(t, leader), joinedServer(t, leader)
	servers := []*TestAgent{leader, f1, f2}
	waitUntilWithin(t, time.Minute, "three raft peers", func() bool {
		var cfg structs.RaftConfigurationResponse
		return leader.RPC("Operator.RaftGetConfiguration", &structs.GenericRequest{QueryOptions: structs.QueryOptions{Region: "global"}}, &cfg) == nil && len(cfg.Servers) == 3
	})
	client := NewTestAgent(t, func(c *config.Config) {
		c.Server.Enabled = false
		c.Client.Servers = []string{f1.RPCAddr()}
	})

	const n = 20
	for i := 0; i < n; i++ {
		registerAnywhere(t, bigJob(fmt.Sprintf("big-%02d", i), 0), servers...)
	}
	// Whichever servers follow now forward the list to the leader.
	var follower, leading *TestAgent
	waitUntil(t, "a leader", func() bool {
		for _, a := range servers {
			if a.server.IsLeader() {
				leading = a
			} else {
				follower = a
			}
		}
		return leading != nil
	})
	// The server pages the list: the first page is not all of it, and
	// fits in a message.
	var first structs.JobListResponse
	if err := leading.RPC("Job.List", &structs.JobListRequest{QueryOptions: structs.QueryOptions{Region: "global"}}, &first); err != nil {
		t.Fatal(err)
	}
	if first.NextToken == "" || len(first.Jobs) == 0 || len(first.Jobs) >= n {
		t.Fatalf("first page: %d jobs, next token %q", len(first.Jobs), first.NextToken)
	}
	if enc, _ := rpcx.Encode(&first); len(enc) > rpcx.DefaultMaxMessageSize {
		t.Fatalf("a page is %d bytes, over the message limit", len(enc))
	}

	listJobs(t, follower, n) // forwarded to the leader
	listJobs(t, client, n)   // over RPC from a client-only agent
	listJobs(t, leading, n)  // in process

	// The user's own paging still works on top.
	resp, body := getThroughElections(t, follower.URL+"/v1/jobs?per_page=7&next_token=big-05")
	var page []*structs.JobListStub
	if err := json.Unmarshal(body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page) != 7 || page[0].ID != "big-05" || resp.Header.Get("X-Nomad-NextToken") != "big-12" {
		t.Fatalf("per_page=7 from big-05: %d jobs, next %q", len(page), resp.Header.Get("X-Nomad-NextToken"))
	}
}

// TestAClientGetsAndRunsAllocationsLargerThanOneMessage places 20
// allocations of a job with ~1 MB of meta on a client-only agent: each
// allocation embeds the job, so the client's fetch of them (19 MB) is
// over the RPC message limit and must come in pages. The client runs them
// all, and the node's allocations list whole through its agent.
func TestAClientGetsAndRunsAllocationsLargerThanOneMessage(t *testing.T) {
	t.Parallel()
	srv := NewTestAgent(t, func(c *config.Config) { steadyRaft(c); c.Client.Enabled = false })
	client := NewTestAgent(t, func(c *config.Config) {
		c.Server.Enabled = false
		c.Client.Servers = []string{srv.RPCAddr()}
	})
	const n = 20
	registerJob(t, srv, bigJob("big-x", n))
	var allocs []*structs.AllocListStub
	waitUntilWithin(t, 2*time.Minute, "every allocation running", func() bool {
		callOK(t, http.MethodGet, srv.URL+"/v1/job/big-x/allocations", nil, &allocs)
		running := 0
		for _, a := range allocs {
			if a.ClientStatus == structs.AllocClientStatusRunning && a.NodeID == client.NodeID() {
				running++
			}
		}
		return running == n
	})
	var full []*structs.Allocation
	callOK(t, http.MethodGet, client.URL+"/v1/node/"+client.NodeID()+"/allocations", nil, &full)
	if len(full) != n {
		t.Fatalf("%d allocations of the node listed, want %d", len(full), n)
	}
	for _, a := range full {
		if a.Job == nil || len(a.Job.Meta["blob"]) != bigMeta {
			t.Fatalf("allocation %s came without its whole job", a.ID)
		}
	}
}
