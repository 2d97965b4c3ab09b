package nomad_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/client"
	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/testclient"
	"github.com/drover-sched/drover/helper/testutil/wait"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/nomad/nomadtest"
	"github.com/drover-sched/drover/structs"
)

// A real server and a real client talking over TCP and yamux: the client
// registers, heartbeats, receives its assignment, runs raw_exec tasks and
// reports their status back.

func startServerAndClient(t *testing.T) (*nomad.Server, *client.Client) {
	t.Helper()
	s := nomadtest.Server(t, func(c *nomad.Config) { c.NumSchedulers = 2 })
	nomadtest.WaitForLeader(t, 5*time.Second, s)
	c := testclient.New(t, func(cfg *config.Config) { cfg.Servers = []string{s.RPCAddr()} })
	wait.For(t, 10*time.Second, func() (bool, string) {
		n, _ := s.State().NodeByID(nil, c.NodeID())
		if n == nil {
			return false, "client not registered"
		}
		return n.Status == structs.NodeStatusReady, "node status " + n.Status
	})
	return s, c
}

func rawExecJob(id, jobType, script string) *structs.Job {
	return &structs.Job{ID: id, Type: jobType, TaskGroups: []*structs.TaskGroup{{
		Name: "g", Count: 1,
		Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", KillTimeout: time.Second,
			Config:    map[string]any{"command": "/bin/sh", "args": []any{"-c", script}},
			Resources: &structs.Resources{CPU: 100, MemoryMB: 32}}},
	}}}
}

func onlyAlloc(t *testing.T, s *nomad.Server, jobID string) *structs.Allocation {
	t.Helper()
	allocs, err := s.State().AllocsByJob(nil, structs.DefaultNamespace, jobID, true)
	if err != nil || len(allocs) != 1 {
		return nil
	}
	return allocs[0]
}

func TestClientRunsABatchJobToCompletion(t *testing.T) {
	t.Parallel()
	s, c := startServerAndClient(t)
	var resp structs.JobRegisterResponse
	job := rawExecJob("hello", structs.JobTypeBatch, `echo "hello from ${NOMAD_JOB_NAME}"; sleep 0.3`)
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &resp); err != nil {
		t.Fatal(err)
	}
	var seen []string
	wait.For(t, 20*time.Second, func() (bool, string) {
		a := onlyAlloc(t, s, "hello")
		if a == nil {
			return false, "no alloc yet"
		}
		if len(seen) == 0 || seen[len(seen)-1] != a.ClientStatus {
			seen = append(seen, a.ClientStatus)
		}
		return a.ClientStatus == structs.AllocClientStatusComplete, "alloc " + a.ClientStatus
	})
	a := onlyAlloc(t, s, "hello")
	if a.NodeID != c.NodeID() {
		t.Fatalf("alloc placed on %s, not the client's node %s", a.NodeID, c.NodeID())
	}
	ts := a.TaskStates["t"]
	if ts == nil || ts.State != structs.TaskStateDead || ts.Failed {
		t.Fatalf("task state wrong: %+v", ts)
	}
	rc, err := c.AllocLogs(a.ID, "t", "stdout", "start", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(rc)
	rc.Close()
	if !strings.Contains(string(out), "hello from hello") {
		t.Fatalf("task output not in logs (env interpolation?): %q", out)
	}
	t.Logf("client statuses seen on the server: %v", seen)
}

func TestClientStopsATaskWhenTheJobStops(t *testing.T) {
	t.Parallel()
	s, _ := startServerAndClient(t)
	var resp structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: rawExecJob("svc", structs.JobTypeService, "exec sleep 300")}, &resp); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 20*time.Second, func() (bool, string) {
		a := onlyAlloc(t, s, "svc")
		if a == nil {
			return false, "no alloc"
		}
		return a.ClientStatus == structs.AllocClientStatusRunning, "alloc " + a.ClientStatus
	})
	var dresp structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "svc"}, &dresp); err != nil {
		t.Fatal(err)
	}
	wait.For(t, 20*time.Second, func() (bool, string) {
		a := onlyAlloc(t, s, "svc")
		return a.DesiredStatus == structs.AllocDesiredStatusStop && a.ClientTerminalStatus(),
			fmt.Sprintf("desired %s client %s", a.DesiredStatus, a.ClientStatus)
	})
	job, _ := s.State().JobByID(nil, structs.DefaultNamespace, "svc")
	if job.Status != structs.JobStatusDead {
		t.Fatalf("a stopped job whose allocs stopped must be dead, got %s", job.Status)
	}
}

// Every call a real client makes for itself carries its node's secret, and
// the servers accept it: it registers, heartbeats, reads its assignment and
// its allocs, and reports their status. Heartbeats are short here (a TTL
// of one to two seconds) so that several pass while the job starts.
func TestRealClientActsAsItsNodeOnEveryCall(t *testing.T) {
	t.Parallel()
	s := nomadtest.Server(t, func(c *nomad.Config) { c.MinHeartbeatTTL = time.Second })
	nomadtest.WaitForLeader(t, 5*time.Second, s)
	c := testclient.New(t, func(cfg *config.Config) { cfg.Servers = []string{s.RPCAddr()} })
	wait.For(t, 10*time.Second, func() (bool, string) {
		n, _ := s.State().NodeByID(nil, c.NodeID())
		return n != nil && n.Status == structs.NodeStatusReady, "client not registered and ready"
	})
	n, _ := s.State().NodeByID(nil, c.NodeID())
	if n.SecretID == "" || n.SecretID != c.Node().SecretID {
		t.Fatalf("the node registered with secret %q, the client holds %q", n.SecretID, c.Node().SecretID)
	}
	registered := c.LastHeartbeat()

	var resp structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: rawExecJob("svc", structs.JobTypeService, "exec sleep 300")}, &resp); err != nil {
		t.Fatal(err)
	}
	// Running on the server means the client read its assignment
	// (Node.GetClientAllocs), fetched the alloc (Alloc.GetAllocs) and
	// reported it (Node.UpdateAlloc), each as its node.
	wait.For(t, 20*time.Second, func() (bool, string) {
		a := onlyAlloc(t, s, "svc")
		if a == nil {
			return false, "no alloc"
		}
		return a.ClientStatus == structs.AllocClientStatusRunning && a.NodeID == c.NodeID(), "alloc " + a.ClientStatus
	})
	// Node.UpdateStatus: accepted heartbeats move the client's clock of
	// the last one.
	wait.For(t, 10*time.Second, func() (bool, string) {
		return c.LastHeartbeat().After(registered), "no heartbeat accepted since registration"
	})
	if n, _ := s.State().NodeByID(nil, c.NodeID()); n.Status != structs.NodeStatusReady {
		t.Fatalf("node is %s after heartbeats", n.Status)
	}
}
