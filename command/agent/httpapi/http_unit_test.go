package httpapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/rpc"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/nomad"
	"github.com/drover-sched/drover/structs"
)

// fakeRPC answers RPCs from a table of functions, so handlers can be
// tested against answers a real server would rarely give.
type fakeRPC map[string]func(args, reply any) error

func (f fakeRPC) RPC(_ context.Context, method string, args, reply any) error {
	if fn, ok := f[method]; ok {
		return fn(args, reply)
	}
	return rpc.ServerError("rpc: can't find method " + method)
}

func fakeAPI(t *testing.T, rpcs fakeRPC, client Client) *httptest.Server {
	s := &httpAPI{
		rpc: rpcs, client: client, logger: hclog.NewNullLogger(), forward: &http.Client{},
		info: func() AgentInfo { return AgentInfo{Config: config.Dev()} },
	}
	srv := httptest.NewServer(s.handler())
	t.Cleanup(srv.Close)
	return srv
}

func TestErrorStatusMapping(t *testing.T) {
	cases := []struct {
		err  error
		code int
	}{
		{badRequest("x"), 400},
		{fmt.Errorf("wrapped: %w", nomad.ErrBadRequest), 400},
		{rpc.ServerError("bad request: job priority 500 must be between 1 and 100"), 400},
		{&structs.ValidationError{Problems: []string{"p"}}, 400},
		{rpc.ServerError("job \"x\" not found"), 404},
		{rpc.ServerError("Enforcing job modify index 3: job exists with 4"), 409},
		// A server of an earlier release wrote the text in lower case.
		{rpc.ServerError("enforcing job modify index 3: job exists with 4"), 409},
		{rpc.ServerError("rpc: can't find method Job.Frobnicate"), 501},
		{rpc.ServerError("Permission denied"), 403},
		{errors.New("raft: leadership lost"), 500},
	}
	for _, tc := range cases {
		if got := errorStatus(tc.err); got != tc.code {
			t.Errorf("%v: want %d, got %d", tc.err, tc.code, got)
		}
	}
}

func TestMissingServerMethodsAre501WithAClearMessage(t *testing.T) {
	srv := fakeAPI(t, fakeRPC{}, nil)
	resp, body := call(t, "POST", srv.URL+"/v1/job/web/revert", map[string]any{"JobVersion": 1})
	requireStatus(t, resp, body, 501, "/v1/job/web/revert is not implemented by this server yet")
	resp, body = call(t, "POST", srv.URL+"/v1/job/web/stable", map[string]any{"JobVersion": 1, "Stable": true})
	requireStatus(t, resp, body, 501, "Job.Stable")
}

func TestSystemGCWithoutEndpointIsANoOp(t *testing.T) {
	srv := fakeAPI(t, fakeRPC{}, nil)
	resp, body := call(t, "PUT", srv.URL+"/v1/system/gc", nil)
	requireStatus(t, resp, body, 200, "")
}

func TestPlanFillsNullDiffAndAnnotations(t *testing.T) {
	var got *structs.JobPlanRequest
	srv := fakeAPI(t, fakeRPC{"Job.Plan": func(args, reply any) error {
		got = args.(*structs.JobPlanRequest)
		reply.(*structs.JobPlanResponse).Index = 9
		return nil
	}}, nil)
	var out map[string]any
	resp := callOK(t, "POST", srv.URL+"/v1/job/p/plan", api.JobPlanRequest{Job: mockJob("p", 1), Diff: true}, &out)
	if out["Diff"] == nil || out["Annotations"] == nil || out["FailedTGAllocs"] == nil || index(t, resp) != 9 {
		t.Fatalf("plan response: %v", out)
	}
	if !got.Diff || got.Job.ID != "p" || got.Job.TaskGroups[0].RestartPolicy == nil {
		t.Fatalf("plan request: %+v", got)
	}
}

func TestWritesCarryNamespaceAndRegion(t *testing.T) {
	var reg *structs.JobRegisterRequest
	var dereg *structs.JobDeregisterRequest
	srv := fakeAPI(t, fakeRPC{
		"Job.Register": func(args, reply any) error {
			reg = args.(*structs.JobRegisterRequest)
			return nil
		},
		"Job.Deregister": func(args, reply any) error {
			dereg = args.(*structs.JobDeregisterRequest)
			return nil
		},
	}, nil)
	callOK(t, "PUT", srv.URL+"/v1/jobs?namespace=team&region=r2", api.JobRegisterRequest{Job: mockJob("x", 1), EnforceIndex: true, JobModifyIndex: 7, PreserveCounts: true}, nil)
	if reg.Namespace != "team" || reg.Job.Namespace != "team" || reg.Region != "r2" || reg.Job.Region != "r2" ||
		!reg.EnforceIndex || reg.JobModifyIndex != 7 || !reg.PreserveCounts {
		t.Fatalf("register request: %+v", reg)
	}
	callOK(t, "DELETE", srv.URL+"/v1/job/x?purge&global=true", nil, nil)
	if !dereg.Purge || !dereg.Global || dereg.JobID != "x" || dereg.Namespace != "default" {
		t.Fatalf("deregister request: %+v", dereg)
	}
}

func TestBlockingOptionsReachTheRPC(t *testing.T) {
	var q structs.QueryOptions
	srv := fakeAPI(t, fakeRPC{"Eval.List": func(args, reply any) error {
		a := args.(*structs.EvalListRequest)
		q = a.QueryOptions
		if a.FilterJobID != "j" || a.FilterEvalStatus != "blocked" {
			return fmt.Errorf("filters not passed: %+v", a)
		}
		reply.(*structs.EvalListResponse).QueryMeta = structs.QueryMeta{Index: 0, KnownLeader: false}
		return nil
	}}, nil)
	resp := callOK(t, "GET", srv.URL+"/v1/evaluations?job=j&status=blocked&index=12&wait=2m&stale&prefix=ab&namespace=*", nil, nil)
	if q.MinQueryIndex != 12 || q.MaxQueryTime.Minutes() != 2 || !q.AllowStale || q.Prefix != "ab" || q.Namespace != "*" {
		t.Fatalf("query options: %+v", q)
	}
	if resp.Header.Get("X-Nomad-Index") != "1" || resp.Header.Get("X-Nomad-KnownLeader") != "false" {
		t.Fatalf("an index of 0 is sent as 1: %v", resp.Header)
	}
}
