package nomad

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// lister calls one list RPC with q and returns the IDs of the page and
// its next token.
type lister func(q structs.QueryOptions) ([]string, string, error)

// rpcLister adapts a list RPC: req makes the request around q, ids reads
// the reply.
func rpcLister[Req, Reply any](s *Server, method string, req func(structs.QueryOptions) *Req, ids func(*Reply) ([]string, string)) lister {
	return func(q structs.QueryOptions) ([]string, string, error) {
		var reply Reply
		if err := s.RPC(method, req(q), &reply); err != nil {
			return nil, "", err
		}
		got, next := ids(&reply)
		return got, next, nil
	}
}

func idsOf[T any](list []T, id func(T) string) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		out = append(out, id(v))
	}
	return out
}

// TestEveryListEndpointPagesAndResumes asks each list RPC for one object
// a page and follows the tokens: the pages hold one object each and
// together the whole list, in the order of the unpaged answer.
func TestEveryListEndpointPagesAndResumes(t *testing.T) {
	// The nodes' TTL outlasts the test: a missed heartbeat would write.
	s := testServer(t, func(c *Config) { c.MinHeartbeatTTL = time.Hour })
	WaitForLeader(t, 5*time.Second, s)
	n1, n2 := itNode("n1"), itNode("n2")
	registerNode(t, s, n1)
	registerNode(t, s, n2)
	job := itJob("web", 3)
	first := registerJob(t, s, job)
	job = job.Copy()
	job.Meta = map[string]string{"v": "2"}
	registerJob(t, s, job)
	registerJob(t, s, itJob("api", 1))
	// Three live allocs is not enough: the update to v2 may still be
	// replacing them. Every eval done is: nothing writes after that.
	WaitFor(t, 10*time.Second, func() (bool, string) {
		live := desiredRunning(jobAllocs(t, s, "web"))
		if len(live) != 3 {
			return false, fmt.Sprintf("%d live allocs", len(live))
		}
		for _, id := range []string{"web", "api"} {
			evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evals {
				if !e.TerminalStatus() {
					return false, fmt.Sprintf("eval %s of %s is %s", e.ID, id, e.Status)
				}
			}
		}
		return true, ""
	})
	// Deployments, which these jobs do not make, written as the FSM
	// would; nothing writes after them.
	idx, _ := s.State().LatestIndex()
	for i := uint64(1); i <= 2; i++ {
		d := &structs.Deployment{ID: structs.GenerateUUID(), Namespace: structs.DefaultNamespace, JobID: "web", JobVersion: i - 1,
			Status: structs.DeploymentStatusSuccessful, CreateIndex: idx + i, ModifyIndex: idx + i}
		if err := s.State().Write(idx+i, func(tx *state.Txn) error { return tx.UpsertDeployment(d) }); err != nil {
			t.Fatal(err)
		}
	}
	allocs := jobAllocs(t, s, "web")
	allocIDs := idsOf(allocs, func(a *structs.Allocation) string { return a.ID })
	onN1 := 0
	for _, a := range allocs {
		if a.NodeID == "n1" {
			onN1++
		}
	}
	busy := n1
	if onN1 < 2 {
		busy = n2
	}
	stubID := func(a *structs.AllocListStub) string { return a.ID }
	allocID := func(a *structs.Allocation) string { return a.ID }
	evalID := func(e *structs.Evaluation) string { return e.ID }
	depID := func(d *structs.Deployment) string { return d.ID }

	for name, l := range map[string]lister{
		"Job.List": rpcLister(s, "Job.List", func(q structs.QueryOptions) *structs.JobListRequest { return &structs.JobListRequest{QueryOptions: q} },
			func(r *structs.JobListResponse) ([]string, string) {
				return idsOf(r.Jobs, func(j *structs.JobListStub) string { return j.ID }), r.NextToken
			}),
		"Job.Allocations": rpcLister(s, "Job.Allocations", func(q structs.QueryOptions) *structs.JobSpecificRequest {
			return &structs.JobSpecificRequest{JobID: "web", All: true, QueryOptions: q}
		}, func(r *structs.JobAllocationsResponse) ([]string, string) {
			return idsOf(r.Allocations, stubID), r.NextToken
		}),
		"Job.Evaluations": rpcLister(s, "Job.Evaluations", func(q structs.QueryOptions) *structs.JobSpecificRequest {
			return &structs.JobSpecificRequest{JobID: "web", QueryOptions: q}
		}, func(r *structs.JobEvaluationsResponse) ([]string, string) {
			return idsOf(r.Evaluations, evalID), r.NextToken
		}),
		"Job.GetJobVersions": rpcLister(s, "Job.GetJobVersions", func(q structs.QueryOptions) *structs.JobVersionsRequest {
			return &structs.JobVersionsRequest{JobID: "web", QueryOptions: q}
		}, func(r *structs.JobVersionsResponse) ([]string, string) {
			return idsOf(r.Versions, func(j *structs.Job) string { return fmt.Sprint(j.Version) }), r.NextToken
		}),
		"Job.Deployments": rpcLister(s, "Job.Deployments", func(q structs.QueryOptions) *structs.JobSpecificRequest {
			return &structs.JobSpecificRequest{JobID: "web", All: true, QueryOptions: q}
		}, func(r *structs.JobDeploymentsResponse) ([]string, string) {
			return idsOf(r.Deployments, depID), r.NextToken
		}),
		"Alloc.List": rpcLister(s, "Alloc.List", func(q structs.QueryOptions) *structs.AllocListRequest {
			return &structs.AllocListRequest{QueryOptions: q}
		},
			func(r *structs.AllocListResponse) ([]string, string) {
				return idsOf(r.Allocations, stubID), r.NextToken
			}),
		"Alloc.GetAllocs": rpcLister(s, "Alloc.GetAllocs", func(q structs.QueryOptions) *structs.AllocsGetRequest {
			return &structs.AllocsGetRequest{AllocIDs: allocIDs, QueryOptions: q}
		}, func(r *structs.AllocsGetResponse) ([]string, string) { return idsOf(r.Allocs, allocID), r.NextToken }),
		"Node.List": rpcLister(s, "Node.List", func(q structs.QueryOptions) *structs.NodeListRequest {
			return &structs.NodeListRequest{QueryOptions: q}
		},
			func(r *structs.NodeListResponse) ([]string, string) {
				return idsOf(r.Nodes, func(n *structs.NodeListStub) string { return n.ID }), r.NextToken
			}),
		"Node.GetAllocs": rpcLister(s, "Node.GetAllocs", func(q structs.QueryOptions) *structs.NodeSpecificRequest {
			return &structs.NodeSpecificRequest{NodeID: busy.ID, QueryOptions: q}
		}, func(r *structs.NodeAllocsResponse) ([]string, string) { return idsOf(r.Allocs, allocID), r.NextToken }),
		"Eval.List": rpcLister(s, "Eval.List", func(q structs.QueryOptions) *structs.EvalListRequest {
			return &structs.EvalListRequest{QueryOptions: q}
		},
			func(r *structs.EvalListResponse) ([]string, string) { return idsOf(r.Evaluations, evalID), r.NextToken }),
		"Eval.Allocations": rpcLister(s, "Eval.Allocations", func(q structs.QueryOptions) *structs.EvalSpecificRequest {
			return &structs.EvalSpecificRequest{EvalID: first.EvalID, QueryOptions: q}
		}, func(r *structs.EvalAllocationsResponse) ([]string, string) {
			return idsOf(r.Allocations, stubID), r.NextToken
		}),
		"Deployment.List": rpcLister(s, "Deployment.List", func(q structs.QueryOptions) *structs.GenericRequest { return &structs.GenericRequest{QueryOptions: q} },
			func(r *structs.DeploymentListResponse) ([]string, string) {
				return idsOf(r.Deployments, depID), r.NextToken
			}),
	} {
		t.Run(name, func(t *testing.T) {
			whole, next, err := l(structs.QueryOptions{Region: "global"})
			if err != nil || next != "" {
				t.Fatalf("unpaged: %v, token %q", err, next)
			}
			if len(whole) < 2 {
				t.Fatalf("only %d objects: nothing to page", len(whole))
			}
			var paged []string
			q := structs.QueryOptions{Region: "global", PerPage: 1}
			for {
				page, next, err := l(q)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) != 1 {
					t.Fatalf("page at %q holds %d objects", q.NextToken, len(page))
				}
				paged = append(paged, page...)
				if next == "" {
					break
				}
				q.NextToken = next
			}
			if !slices.Equal(paged, whole) {
				t.Fatalf("pages %v, whole %v", paged, whole)
			}
		})
	}
}
