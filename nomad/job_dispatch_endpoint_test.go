package nomad

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/helper/clock"
	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/structs"
)

// These tests drive Job.Dispatch on a real server: the child goes through
// raft, the broker, a worker and the plan applier like any job. The
// server's clock is fake, so the time in a child's ID is known.

// dispatchParent is a parameterized batch job with one mock task that
// takes the payload as local/input.json.
func dispatchParent(id, payload string) *structs.Job {
	j := itJob(id, 1)
	j.Type = structs.JobTypeBatch
	j.Meta = map[string]string{"profile": "standard", "owner": "data"}
	j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: payload, MetaRequired: []string{"input"}, MetaOptional: []string{"profile"}}
	task := j.TaskGroups[0].Tasks[0]
	task.Config = map[string]any{"run_for": "1s"}
	task.DispatchPayload = &structs.DispatchPayloadConfig{File: "input.json"}
	return j
}

func dispatchServer(t *testing.T) *Server {
	t.Helper()
	s := testServer(t, periodicServerConfig(clock.NewFake(periodicEpoch)))
	WaitForLeader(t, 5*time.Second, s)
	registerNode(t, s, itNode("n1"))
	return s
}

func dispatchJob(s *Server, req *structs.JobDispatchRequest) (*structs.JobDispatchResponse, error) {
	var resp structs.JobDispatchResponse
	err := s.RPC("Job.Dispatch", req, &resp)
	return &resp, err
}

func mustDispatch(t *testing.T, s *Server, req *structs.JobDispatchRequest) *structs.JobDispatchResponse {
	t.Helper()
	resp, err := dispatchJob(s, req)
	if err != nil {
		t.Fatalf("dispatching %s: %v", req.JobID, err)
	}
	return resp
}

// dispatchedChildren returns the dispatched children of parentID in state.
func dispatchedChildren(t *testing.T, st *state.StateStore, parentID string) []*structs.Job {
	t.Helper()
	it, err := st.JobsByIDPrefix(nil, structs.DefaultNamespace, parentID+"/")
	if err != nil {
		t.Fatal(err)
	}
	var out []*structs.Job
	for raw := it.Next(); raw != nil; raw = it.Next() {
		if j := raw.(*structs.Job); j.IsDispatchedChildOf(parentID) {
			out = append(out, j)
		}
	}
	return out
}

func childrenCounts(s *Server, parentID string) structs.JobChildrenSummary {
	sum, _ := s.State().JobSummaryByID(nil, structs.DefaultNamespace, parentID)
	if sum == nil || sum.Children == nil {
		return structs.JobChildrenSummary{}
	}
	return *sum.Children
}

func TestJobDispatchCreatesAChildThatIsScheduled(t *testing.T) {
	s := dispatchServer(t)
	if resp := registerJob(t, s, dispatchParent("encode", "optional")); resp.EvalID != "" {
		t.Fatalf("registering a parameterized parent created eval %s", resp.EvalID)
	}
	payload := []byte(`{"rows": 3}`)
	resp := mustDispatch(t, s, &structs.JobDispatchRequest{JobID: "encode", Payload: payload,
		Meta: map[string]string{"input": "a.csv", "profile": "fast"}})

	idShape := regexp.MustCompile(fmt.Sprintf(`^encode/dispatch-%d-[0-9a-f]{8}$`, periodicEpoch.Unix()))
	if !idShape.MatchString(resp.DispatchedJobID) {
		t.Fatalf("child ID %q does not have Nomad's shape %s", resp.DispatchedJobID, idShape)
	}
	if resp.EvalID == "" || resp.Index == 0 || resp.EvalCreateIndex != resp.Index || resp.JobCreateIndex != resp.Index {
		t.Fatalf("the child and its eval must come from one raft entry: %+v", resp)
	}

	st := s.State()
	parent, _ := st.JobByID(nil, "default", "encode")
	child, _ := st.JobByID(nil, "default", resp.DispatchedJobID)
	if child == nil {
		t.Fatalf("child %s not in state", resp.DispatchedJobID)
	}
	wantMeta := map[string]string{"input": "a.csv", "profile": "fast", "owner": "data"}
	switch {
	case child.ParentID != "encode" || !child.Dispatched || child.ParameterizedJob == nil || child.IsParameterized():
		t.Fatalf("child must be a dispatched, non-parameterized child of encode: %+v", child)
	case !structs.DeepEqual(child.Meta, wantMeta):
		t.Fatalf("child meta %v, want the request's merged over the parent's %v", child.Meta, wantMeta)
	case !bytes.Equal(child.Payload, payload):
		t.Fatalf("child payload %q", child.Payload)
	case child.SubmitTime != periodicEpoch.UnixNano() || child.CreateIndex != resp.JobCreateIndex || child.Name != child.ID:
		t.Fatalf("child submit time %d, create index %d, name %q", child.SubmitTime, child.CreateIndex, child.Name)
	case !structs.DeepEqual(child.TaskGroups, parent.TaskGroups) || child.Priority != parent.Priority || child.Type != structs.JobTypeBatch:
		t.Fatal("child must run the parent's version's groups")
	}
	eval, _ := st.EvalByID(nil, resp.EvalID)
	if eval == nil || eval.JobID != child.ID || eval.TriggeredBy != structs.EvalTriggerJobRegister || eval.CreateIndex != resp.EvalCreateIndex {
		t.Fatalf("child eval %+v", eval)
	}

	// The child is scheduled, and its allocs carry the payload to clients.
	alloc := livePeriodicAlloc(t, s, child.ID)
	if alloc.NodeID != "n1" || !bytes.Equal(alloc.Job.Payload, payload) {
		t.Fatalf("alloc on %q with payload %q", alloc.NodeID, alloc.Job.Payload)
	}
	waitEvalDone(t, s, resp.EvalID)

	// The parent counts its child as Nomad's JobSummary.Children does.
	if err := reportAlloc(s, alloc, structs.AllocClientStatusRunning); err != nil {
		t.Fatal(err)
	}
	waitChildStatus(t, s, child.ID, structs.JobStatusRunning)
	if c := childrenCounts(s, "encode"); c != (structs.JobChildrenSummary{Running: 1}) {
		t.Fatalf("children %+v, want one running", c)
	}
	if err := reportAlloc(s, alloc, structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	waitChildStatus(t, s, child.ID, structs.JobStatusDead)
	if c := childrenCounts(s, "encode"); c != (structs.JobChildrenSummary{Dead: 1}) {
		t.Fatalf("children %+v, want one dead", c)
	}

	// Listing jobs shows the child with its ParentID; the parent is
	// listed as parameterized, still running.
	var list structs.JobListResponse
	if err := s.RPC("Job.List", &structs.JobListRequest{}, &list); err != nil {
		t.Fatal(err)
	}
	var sawParent, sawChild bool
	for _, j := range list.Jobs {
		switch j.ID {
		case "encode":
			sawParent = j.ParameterizedJob && j.Status == structs.JobStatusRunning && j.JobSummary.Children.Dead == 1
		case child.ID:
			sawChild = j.ParentID == "encode" && !j.ParameterizedJob
		}
	}
	if !sawParent || !sawChild {
		t.Fatalf("job list %+v lacks the parent or the child as Nomad lists them", list.Jobs)
	}
}

func TestJobDispatchRejectsBadRequestsAndChangesNothing(t *testing.T) {
	s := dispatchServer(t)
	registerJob(t, s, dispatchParent("encode", "optional"))
	registerJob(t, s, dispatchParent("strict", "required"))
	registerJob(t, s, dispatchParent("quiet", "forbidden"))
	registerJob(t, s, dispatchParent("halted", "optional"))
	web := itJob("web", 1)
	registerJob(t, s, web)
	var dereg structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: "halted"}, &dereg); err != nil {
		t.Fatal(err)
	}
	child := mustDispatch(t, s, &structs.JobDispatchRequest{JobID: "encode", Meta: map[string]string{"input": "x"}})
	waitEvalDone(t, s, child.EvalID)
	WaitFor(t, 10*time.Second, func() (bool, string) {
		evals, _ := s.State().EvalsByJob(nil, "default", "web")
		return len(evals) == 1 && evals[0].Status == structs.EvalStatusComplete, "web's eval not complete"
	})

	ok := map[string]string{"input": "x"}
	cases := []struct {
		name string
		req  structs.JobDispatchRequest
		want []string
	}{
		{"no job ID", structs.JobDispatchRequest{}, []string{"bad request", "job ID is missing"}},
		{"an unknown job", structs.JobDispatchRequest{JobID: "nope", Meta: ok}, []string{`job "nope"`, "not found"}},
		{"a job that is not parameterized", structs.JobDispatchRequest{JobID: "web"},
			[]string{"bad request", `job "web" is not parameterized`}},
		{"a stopped parent", structs.JobDispatchRequest{JobID: "halted", Meta: ok},
			[]string{"bad request", `job "halted" is stopped`}},
		{"a dispatched child", structs.JobDispatchRequest{JobID: child.DispatchedJobID, Meta: ok},
			[]string{"bad request", "is itself a dispatched child (of \"encode\")"}},
		{"a required meta key missing", structs.JobDispatchRequest{JobID: "encode", Meta: map[string]string{"profile": "fast"}},
			[]string{"bad request", `required meta keys ["input"] are missing (job "encode" has meta_required = ["input"])`}},
		{"an unpermitted meta key", structs.JobDispatchRequest{JobID: "encode", Meta: map[string]string{"input": "x", "zone": "z"}},
			[]string{"bad request", `meta keys ["zone"] are not allowed by job "encode"; allowed keys: meta_required = ["input"], meta_optional = ["profile"]`}},
		{"a required payload missing", structs.JobDispatchRequest{JobID: "strict", Meta: ok},
			[]string{"bad request", `payload is missing: job "strict" requires one`}},
		{"a forbidden payload", structs.JobDispatchRequest{JobID: "quiet", Meta: ok, Payload: []byte("x")},
			[]string{"bad request", `payload of 1 bytes is not allowed: job "quiet" forbids one`}},
		{"a payload over 16 KiB", structs.JobDispatchRequest{JobID: "encode", Meta: ok, Payload: make([]byte, 16*1024+1)},
			[]string{"bad request", "payload is 16385 bytes, more than the limit of 16384 bytes"}},
		{"a priority out of range", structs.JobDispatchRequest{JobID: "encode", Meta: ok, Priority: 500},
			[]string{"bad request", "priority 500 must be between 1 and 100"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := dumpState(t, s.State())
			_, err := dispatchJob(s, &tc.req)
			if err == nil {
				t.Fatal("dispatch accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if after := dumpState(t, s.State()); !structs.DeepEqual(before, after) {
				t.Fatal("a rejected dispatch changed the state")
			}
		})
	}
}

func TestJobDispatchIdempotencyToken(t *testing.T) {
	s := dispatchServer(t)
	registerJob(t, s, dispatchParent("encode", "optional"))
	meta := map[string]string{"input": "x"}

	first := mustDispatch(t, s, &structs.JobDispatchRequest{JobID: "encode", Meta: meta, IdempotencyToken: "t1"})
	if first.EvalID == "" {
		t.Fatalf("first dispatch created no eval: %+v", first)
	}
	waitEvalDone(t, s, first.EvalID)
	child, _ := s.State().JobByID(nil, "default", first.DispatchedJobID)
	if child == nil || child.DispatchIdempotencyToken != "t1" {
		t.Fatalf("child %+v must keep its token", child)
	}

	// The same token while the child lives: that child, no new eval.
	evalsBefore, _ := s.State().EvalsByJob(nil, "default", first.DispatchedJobID)
	again := mustDispatch(t, s, &structs.JobDispatchRequest{JobID: "encode", Meta: meta, IdempotencyToken: "t1"})
	want := structs.JobDispatchResponse{DispatchedJobID: first.DispatchedJobID, JobCreateIndex: first.JobCreateIndex}
	want.Index = child.ModifyIndex
	if again.DispatchedJobID != want.DispatchedJobID || again.EvalID != "" || again.EvalCreateIndex != 0 ||
		again.JobCreateIndex != want.JobCreateIndex || again.Index != want.Index {
		t.Fatalf("repeated dispatch answered %+v, want %+v", again, want)
	}
	evalsAfter, _ := s.State().EvalsByJob(nil, "default", first.DispatchedJobID)
	if n := len(dispatchedChildren(t, s.State(), "encode")); n != 1 || len(evalsAfter) != len(evalsBefore) {
		t.Fatalf("repeated dispatch left %d children and %d evals (was %d)", n, len(evalsAfter), len(evalsBefore))
	}

	// Another token is another dispatch.
	other := mustDispatch(t, s, &structs.JobDispatchRequest{JobID: "encode", Meta: meta, IdempotencyToken: "t2"})
	if other.DispatchedJobID == first.DispatchedJobID || other.EvalID == "" {
		t.Fatalf("dispatch with another token answered %+v", other)
	}
	waitEvalDone(t, s, other.EvalID)

	// Once the child is dead, its token may be used again.
	alloc := livePeriodicAlloc(t, s, first.DispatchedJobID)
	if err := reportAlloc(s, alloc, structs.AllocClientStatusComplete); err != nil {
		t.Fatal(err)
	}
	waitChildStatus(t, s, first.DispatchedJobID, structs.JobStatusDead)
	reused := mustDispatch(t, s, &structs.JobDispatchRequest{JobID: "encode", Meta: meta, IdempotencyToken: "t1"})
	if reused.DispatchedJobID == first.DispatchedJobID || reused.EvalID == "" {
		t.Fatalf("token of a dead child was not released: %+v", reused)
	}
	waitEvalDone(t, s, reused.EvalID)

	// So may the token of a stopped child.
	var dereg structs.JobDeregisterResponse
	if err := s.RPC("Job.Deregister", &structs.JobDeregisterRequest{JobID: other.DispatchedJobID}, &dereg); err != nil {
		t.Fatal(err)
	}
	afterStop := mustDispatch(t, s, &structs.JobDispatchRequest{JobID: "encode", Meta: meta, IdempotencyToken: "t2"})
	if afterStop.DispatchedJobID == other.DispatchedJobID || afterStop.EvalID == "" {
		t.Fatalf("token of a stopped child was not released: %+v", afterStop)
	}
	if n := len(dispatchedChildren(t, s.State(), "encode")); n != 4 {
		t.Fatalf("%d children, want 4", n)
	}
}

// Two dispatches with one token racing: both may pass the endpoint's fast
// check, but the FSM stores one child, and both callers are told its ID.
func TestJobDispatchRacingDispatchesWithOneTokenStoreOneChild(t *testing.T) {
	s := dispatchServer(t)
	registerJob(t, s, dispatchParent("encode", "optional"))
	const racers = 4
	resps := make([]*structs.JobDispatchResponse, racers)
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i], errs[i] = dispatchJob(s, &structs.JobDispatchRequest{JobID: "encode", Meta: map[string]string{"input": "x"}, IdempotencyToken: "race"})
		}()
	}
	wg.Wait()
	evals := 0
	for i := range racers {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v", i, errs[i])
		}
		if resps[i].DispatchedJobID != resps[0].DispatchedJobID {
			t.Fatalf("racers were told of different children: %s and %s", resps[0].DispatchedJobID, resps[i].DispatchedJobID)
		}
		if resps[i].EvalID != "" {
			evals++
		}
	}
	if n := len(dispatchedChildren(t, s.State(), "encode")); n != 1 || evals != 1 {
		t.Fatalf("%d children and %d evals from one token, want 1 and 1", n, evals)
	}
}
