package nomad

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/structs"
)

// limitsServer is a leader with one roomy node and small job bounds.
func limitsServer(t *testing.T, cb func(*Config)) *Server {
	s := testServer(t, func(c *Config) {
		c.JobMaxCount = 5
		c.JobMaxAllocs = 8
		if cb != nil {
			cb(c)
		}
	})
	WaitForLeader(t, 5*time.Second, s)
	n := itNode("n1")
	n.NodeResources.Cpu.CpuShares = 1 << 20
	n.NodeResources.Memory.MemoryMB = 1 << 20
	registerNode(t, s, n)
	return s
}

func bigMeta(bytes int) map[string]string {
	return map[string]string{"blob": strings.Repeat("x", bytes)}
}

func requireRefused(t *testing.T, err error, wants ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want a refusal mentioning %q, got none", wants)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("error %q should mention %q", err, w)
		}
	}
}

func requireNoJob(t *testing.T, s *Server, id string) {
	t.Helper()
	if j, err := s.State().JobByID(nil, structs.DefaultNamespace, id); err != nil || j != nil {
		t.Fatalf("a refused job must not be stored, found %v (%v)", j, err)
	}
}

// The finding: Count = 1000000000 was accepted, and the reconciler grew
// until the server died, on every start again since the job was stored.
func TestRegisterRefusesCountsOverTheLimits(t *testing.T) {
	s := limitsServer(t, nil)
	var resp structs.JobRegisterResponse

	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: itJob("huge", 1_000_000_000)}, &resp)
	requireRefused(t, err, `group "web" of job "huge" has count 1000000000`, "job_max_count of 5", "server.job_max_count")
	requireNoJob(t, s, "huge")

	two := itJob("two", 5)
	g := two.TaskGroups[0].Copy()
	g.Name = "api"
	two.TaskGroups = append(two.TaskGroups, g)
	err = s.RPC("Job.Register", &structs.JobRegisterRequest{Job: two}, &resp)
	requireRefused(t, err, `job "two" asks for 10 allocations in all`, "job_max_allocs of 8", "server.job_max_allocs")
	requireNoJob(t, s, "two")

	err = s.RPC("Job.Plan", &structs.JobPlanRequest{Job: itJob("huge", 6)}, &structs.JobPlanResponse{})
	requireRefused(t, err, "job_max_count of 5")

	registerJob(t, s, itJob("ok", 5))
}

func TestScaleRefusesCountsOverTheLimits(t *testing.T) {
	s := limitsServer(t, nil)
	registerJob(t, s, itJob("web", 1))
	waitLive(t, s, "web", 1)
	_, err := scaleJob(s, "web", "web", scaleCount(1_000_000_000), "")
	requireRefused(t, err, `group "web" of job "web" has count 1000000000`, "server.job_max_count")
	j, _ := s.State().JobByID(nil, structs.DefaultNamespace, "web")
	if j.TaskGroups[0].Count != 1 || j.Version != 0 {
		t.Fatalf("a refused scale must change nothing, job is at count %d version %d", j.TaskGroups[0].Count, j.Version)
	}
}

// The finding: a 10 MB Meta was accepted, then every plan for the job was
// over the RPC size limit.
func TestRegisterRefusesJobsOverTheSourceSize(t *testing.T) {
	s := limitsServer(t, nil)
	job := itJob("fat", 1)
	job.Meta = bigMeta(10 << 20)
	var resp structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job}, &resp)
	requireRefused(t, err, `job "fat" is `, "over the server's job_max_source_size of 1000000 bytes", "server.job_max_source_size")
	if !strings.Contains(err.Error(), ErrTooLarge.Error()) {
		t.Fatalf("a size refusal must be marked %q for the HTTP API's 413: %v", ErrTooLarge, err)
	}
	requireNoJob(t, s, "fat")

	err = s.RPC("Job.Plan", &structs.JobPlanRequest{Job: job}, &structs.JobPlanResponse{})
	requireRefused(t, err, "server.job_max_source_size")
}

func TestDispatchRefusesChildrenOverTheSourceSize(t *testing.T) {
	s := limitsServer(t, func(c *Config) { c.JobMaxSourceSize = 8 << 10 })
	parent := itJob("proc", 1)
	parent.Type = structs.JobTypeBatch
	parent.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: structs.DispatchPayloadOptional, MetaOptional: []string{"blob"}}
	registerJob(t, s, parent)
	var resp structs.JobDispatchResponse
	err := s.RPC("Job.Dispatch", &structs.JobDispatchRequest{JobID: "proc", Meta: bigMeta(10 << 10)}, &resp)
	requireRefused(t, err, "job_max_source_size of 8192 bytes")
	it, _ := s.State().JobsByIDPrefix(nil, structs.DefaultNamespace, "proc/")
	if raw := it.Next(); raw != nil {
		t.Fatalf("a refused dispatch must store no child, found %s", raw.(*structs.Job).ID)
	}
}

// A job just under the size limit still runs at a count whose plan, with
// the job copied into every allocation, would be far over the RPC
// message limit: plans carry the job once and go in parts.
func TestALargeJobIsPlacedInPlansBelowTheMessageLimit(t *testing.T) {
	s := limitsServer(t, func(c *Config) { c.JobMaxCount, c.JobMaxAllocs = 100, 100 })
	job := itJob("wide", 60)
	job.Meta = bigMeta(900_000) // 60 copies would be 54 MB
	resp := registerJob(t, s, job)
	WaitFor(t, 30*time.Second, func() (bool, string) {
		st := evalStatus(t, s, resp.EvalID)
		return st == structs.EvalStatusComplete, "eval is " + st
	})
	if n := len(desiredRunning(jobAllocs(t, s, "wide"))); n != 60 {
		t.Fatalf("%d allocs placed, want 60", n)
	}
	for _, a := range jobAllocs(t, s, "wide") {
		if a.Job == nil || a.Job.Meta["blob"] == "" {
			t.Fatalf("alloc %s lost its job on the way: %+v", a.ID, a.Job)
		}
	}
}

func TestRaftApplyRefusesEntriesOverTheMessageLimit(t *testing.T) {
	s := testServer(t, nil)
	WaitForLeader(t, 5*time.Second, s)
	job := itJob("x", 1)
	job.Meta = bigMeta(rpcx.DefaultMaxMessageSize)
	before := s.raft.LastIndex()
	_, _, err := s.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job})
	requireRefused(t, err, "JobRegister raft entry", "over the 16777216 bytes an entry may have")
	if s.raft.LastIndex() != before {
		t.Fatal("an oversized entry must not reach the log")
	}
}
