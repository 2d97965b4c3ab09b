package nomad

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/client/testclient"
	"github.com/drover-sched/drover/structs"
)

// A notice can be lost without the session closing (a push that failed,
// a server that forgot). The client registers again when its lease
// (BlockingQueryWait, shortened here) runs out, and the registration's
// answer tells it that its allocs moved.
func TestClientRegistersAgainWhenItsLeaseRunsOut(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = 2 })
	WaitForLeader(t, 5*time.Second, s)
	c := testclient.New(t, func(cfg *config.Config) {
		cfg.Servers = []string{s.RPCAddr()}
		cfg.BlockingQueryWait = 2 * time.Second
	})
	WaitFor(t, 60*time.Second, func() (bool, string) {
		return s.AllocNoticeRegistered(c.NodeID()), "the client did not register for alloc notices"
	})
	// The server forgets the registration without a word.
	s.allocNotices.mu.Lock()
	delete(s.allocNotices.entries, c.NodeID())
	s.allocNotices.mu.Unlock()
	pushed := s.AllocNoticesPushed()

	job := &structs.Job{ID: "svc", Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
		Name: "g", Count: 1,
		Tasks: []*structs.Task{{Name: "t", Driver: "raw_exec", KillTimeout: time.Second,
			Config:    map[string]any{"command": "/bin/sh", "args": []any{"-c", "exec sleep 300"}},
			Resources: &structs.Resources{CPU: 100, MemoryMB: 32}}},
	}}}
	var resp structs.JobRegisterResponse
	if err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &resp); err != nil {
		t.Fatal(err)
	}
	WaitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := s.State().AllocsByJob(nil, structs.DefaultNamespace, "svc", true)
		if err != nil || len(allocs) != 1 {
			return false, "no alloc"
		}
		a := allocs[0]
		return a.ClientStatus == structs.AllocClientStatusRunning && a.NodeID == c.NodeID(), "alloc " + a.ClientStatus
	})
	if s.BlockingQueries() != 0 {
		t.Fatalf("%d blocking queries wait on the server", s.BlockingQueries())
	}
	if s.AllocNoticesPushed() != pushed {
		// Not a failure of the lease, but then the test did not show it:
		// the client re-registered (its lease) before the placement.
		t.Logf("a notice was pushed after a re-registration that beat the placement")
	}
}
