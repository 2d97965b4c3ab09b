package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"
)

// subsetJSON reports how got differs from want, where want lists only the
// fields that matter: every key in a want object must be in got with an
// equal (recursively subset) value.
func subsetJSON(got, want string) error {
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("body %q is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return fmt.Errorf("bad want %q: %v", want, err)
	}
	return subset("$", g, w)
}

func subset(path string, g, w any) error {
	wm, ok := w.(map[string]any)
	if !ok {
		if !reflect.DeepEqual(g, w) {
			return fmt.Errorf("%s = %v, want %v", path, g, w)
		}
		return nil
	}
	gm, ok := g.(map[string]any)
	if !ok {
		return fmt.Errorf("%s = %v, want an object", path, g)
	}
	for k, wv := range wm {
		gv, ok := gm[k]
		if !ok {
			return fmt.Errorf("%s.%s missing", path, k)
		}
		if err := subset(path+"."+k, gv, wv); err != nil {
			return err
		}
	}
	return nil
}

// TestEndpointsSendTheRightRequestAndDecodeTheAnswer checks, for every
// endpoint, the method, path, query and body the client sends, and that a
// Nomad-shaped answer decodes into the result.
func TestEndpointsSendTheRightRequestAndDecodeTheAnswer(t *testing.T) {
	job := &Job{ID: new("web"), Name: new("web")}
	tests := []struct {
		name      string
		route     string
		reply     string
		call      func(c *Client) (any, error)
		wantQuery map[string]string
		wantBody  string
		check     func(t *testing.T, got any)
	}{
		{
			name: "jobs list", route: "GET /v1/jobs",
			reply: `[{"ID":"web","Type":"service","Priority":50,"Status":"running","SubmitTime":1700000000000000000}]`,
			call:  func(c *Client) (any, error) { l, _, err := c.Jobs().List(nil); return l, err },
			check: func(t *testing.T, got any) {
				l := got.([]*JobListStub)
				if len(l) != 1 || l[0].ID != "web" || l[0].Priority != 50 || l[0].SubmitTime != 1700000000000000000 {
					t.Errorf("got %+v", l[0])
				}
			},
		},
		{
			name: "jobs prefix list sends the prefix", route: "GET /v1/jobs", reply: `[]`,
			call:      func(c *Client) (any, error) { l, _, err := c.Jobs().PrefixList("we"); return l, err },
			wantQuery: map[string]string{"prefix": "we"},
		},
		{
			name: "job info escapes the ID", route: "GET /v1/job/a b", reply: `{"ID":"a b","Version":3}`,
			call: func(c *Client) (any, error) { j, _, err := c.Jobs().Info("a b", nil); return j, err },
			check: func(t *testing.T, got any) {
				if j := got.(*Job); *j.ID != "a b" || *j.Version != 3 {
					t.Errorf("got %+v", j)
				}
			},
		},
		{
			name: "register", route: "PUT /v1/jobs", reply: `{"EvalID":"e1","JobModifyIndex":7,"Warnings":"w"}`,
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Register(job, nil); return r, err },
			wantBody: `{"Job":{"ID":"web"}}`,
			check: func(t *testing.T, got any) {
				if r := got.(*JobRegisterResponse); r.EvalID != "e1" || r.JobModifyIndex != 7 || r.Warnings != "w" {
					t.Errorf("got %+v", r)
				}
			},
		},
		{
			name: "register with check-index and preserve counts", route: "PUT /v1/jobs", reply: `{}`,
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().RegisterOpts(job, &RegisterOptions{EnforceIndex: true, ModifyIndex: 5, PreserveCounts: true}, nil)
				return r, err
			},
			wantBody: `{"EnforceIndex":true,"JobModifyIndex":5,"PreserveCounts":true}`,
		},
		{
			name: "deregister with purge", route: "DELETE /v1/job/web", reply: `{"EvalID":"e2"}`,
			call:      func(c *Client) (any, error) { id, _, err := c.Jobs().Deregister("web", true, nil); return id, err },
			wantQuery: map[string]string{"purge": "true"},
			check: func(t *testing.T, got any) {
				if got.(string) != "e2" {
					t.Errorf("eval ID %v", got)
				}
			},
		},
		{
			name: "plan with diff", route: "PUT /v1/job/web/plan",
			reply: `{"JobModifyIndex":9,"Diff":{"Type":"Edited","ID":"web","TaskGroups":[{"Type":"Edited","Name":"web","Fields":[{"Type":"Edited","Name":"Count","Old":"1","New":"3"}],"Updates":{"create":2}}]},
				"Annotations":{"DesiredTGUpdates":{"web":{"Place":2,"Ignore":1}}},"FailedTGAllocs":{"web":{"NodesEvaluated":3,"DimensionExhausted":{"memory":2}}},"NextPeriodicLaunch":0}`,
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Plan(job, true, nil); return r, err },
			wantBody: `{"Job":{"ID":"web"},"Diff":true}`,
			check: func(t *testing.T, got any) {
				r := got.(*JobPlanResponse)
				if r.JobModifyIndex != 9 || r.Diff.TaskGroups[0].Fields[0].New != "3" || r.Diff.TaskGroups[0].Updates["create"] != 2 {
					t.Errorf("diff %+v", r.Diff)
				}
				if r.Annotations.DesiredTGUpdates["web"].Place != 2 || r.FailedTGAllocs["web"].DimensionExhausted["memory"] != 2 {
					t.Errorf("annotations %+v failed %+v", r.Annotations, r.FailedTGAllocs)
				}
			},
		},
		{
			name: "job allocations with all", route: "GET /v1/job/web/allocations", reply: `[{"ID":"a1","ClientStatus":"running"}]`,
			call:      func(c *Client) (any, error) { l, _, err := c.Jobs().Allocations("web", true, nil); return l, err },
			wantQuery: map[string]string{"all": "true"},
		},
		{
			name: "job evaluations", route: "GET /v1/job/web/evaluations", reply: `[{"ID":"e1","Status":"complete"}]`,
			call: func(c *Client) (any, error) { l, _, err := c.Jobs().Evaluations("web", nil); return l, err },
		},
		{
			name: "job summary", route: "GET /v1/job/web/summary", reply: `{"JobID":"web","Summary":{"web":{"Running":2,"Queued":1}}}`,
			call: func(c *Client) (any, error) { s, _, err := c.Jobs().Summary("web", nil); return s, err },
			check: func(t *testing.T, got any) {
				if s := got.(*JobSummary); s.Summary["web"].Running != 2 || s.Summary["web"].Queued != 1 {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "job versions with diffs", route: "GET /v1/job/web/versions",
			reply: `{"Versions":[{"ID":"web","Version":1},{"ID":"web","Version":0}],"Diffs":[{"Type":"Edited","ID":"web"}]}`,
			call: func(c *Client) (any, error) {
				v, d, _, err := c.Jobs().Versions("web", true, nil)
				return [2]int{len(v), len(d)}, err
			},
			wantQuery: map[string]string{"diffs": "true"},
			check: func(t *testing.T, got any) {
				if got.([2]int) != [2]int{2, 1} {
					t.Errorf("got %v", got)
				}
			},
		},
		{
			name: "revert", route: "PUT /v1/job/web/revert", reply: `{"EvalID":"e3"}`,
			call: func(c *Client) (any, error) {
				r, _, err := c.Jobs().Revert("web", 2, new(uint64(4)), nil)
				return r, err
			},
			wantBody: `{"JobID":"web","JobVersion":2,"EnforcePriorVersion":4}`,
		},
		{
			name: "stable", route: "PUT /v1/job/web/stable", reply: `{"JobModifyIndex":11}`,
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Stable("web", 2, true, nil); return r, err },
			wantBody: `{"JobID":"web","JobVersion":2,"Stable":true}`,
		},
		{
			name: "job deployments", route: "GET /v1/job/web/deployments", reply: `[{"ID":"d1","Status":"running"}]`,
			call: func(c *Client) (any, error) { l, _, err := c.Jobs().Deployments("web", false, nil); return l, err },
		},
		{
			name: "latest deployment may be null", route: "GET /v1/job/web/deployment", reply: `null`,
			call: func(c *Client) (any, error) { d, _, err := c.Jobs().LatestDeployment("web", nil); return d, err },
			check: func(t *testing.T, got any) {
				if got.(*Deployment) != nil {
					t.Errorf("got %+v", got)
				}
			},
		},
		{
			name: "parse", route: "PUT /v1/jobs/parse", reply: `{"ID":"web"}`,
			call:     func(c *Client) (any, error) { return c.Jobs().ParseHCL(`job "web" {}`, true) },
			wantBody: `{"JobHCL":"job \"web\" {}","Canonicalize":true}`,
		},
		{
			name: "validate", route: "PUT /v1/validate/job", reply: `{"ValidationErrors":["bad"],"Error":"bad"}`,
			call:     func(c *Client) (any, error) { r, _, err := c.Jobs().Validate(job, nil); return r, err },
			wantBody: `{"Job":{"ID":"web"}}`,
		},
		{
			name: "nodes list", route: "GET /v1/nodes", reply: `[{"ID":"n1","Status":"ready","SchedulingEligibility":"eligible"}]`,
			call: func(c *Client) (any, error) { l, _, err := c.Nodes().List(nil); return l, err },
		},
		{
			name: "node info", route: "GET /v1/node/n1",
			reply: `{"ID":"n1","NodeResources":{"Cpu":{"CpuShares":4000},"Memory":{"MemoryMB":8192},"Disk":{"DiskMB":10000}},"ReservedResources":{"Cpu":{"CpuShares":100}}}`,
			call:  func(c *Client) (any, error) { n, _, err := c.Nodes().Info("n1", nil); return n, err },
			check: func(t *testing.T, got any) {
				if cpu, mem, disk := got.(*Node).Allocatable(); cpu != 3900 || mem != 8192 || disk != 10000 {
					t.Errorf("allocatable %d %d %d", cpu, mem, disk)
				}
			},
		},
		{
			name: "node allocations", route: "GET /v1/node/n1/allocations", reply: `[{"ID":"a1"}]`,
			call: func(c *Client) (any, error) { l, _, err := c.Nodes().Allocations("n1", nil); return l, err },
		},
		{
			name: "drain", route: "PUT /v1/node/n1/drain", reply: `{"EvalIDs":["e1"],"NodeModifyIndex":3}`,
			call: func(c *Client) (any, error) {
				return c.Nodes().UpdateDrain("n1", &DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true}, false, nil)
			},
			wantBody: `{"NodeID":"n1","DrainSpec":{"Deadline":3600000000000,"IgnoreSystemJobs":true},"MarkEligible":false}`,
		},
		{
			name: "undrain marks eligible", route: "PUT /v1/node/n1/drain", reply: `{}`,
			call:     func(c *Client) (any, error) { return c.Nodes().UpdateDrain("n1", nil, true, nil) },
			wantBody: `{"NodeID":"n1","DrainSpec":null,"MarkEligible":true}`,
		},
		{
			name: "eligibility", route: "PUT /v1/node/n1/eligibility", reply: `{"NodeModifyIndex":4}`,
			call:     func(c *Client) (any, error) { return c.Nodes().ToggleEligibility("n1", false, nil) },
			wantBody: `{"NodeID":"n1","Eligibility":"ineligible"}`,
		},
		{
			name: "allocations list", route: "GET /v1/allocations", reply: `[]`,
			call:      func(c *Client) (any, error) { l, _, err := c.Allocations().PrefixList("ab"); return l, err },
			wantQuery: map[string]string{"prefix": "ab"},
		},
		{
			name: "allocation info", route: "GET /v1/allocation/a1",
			reply: `{"ID":"a1","TaskStates":{"server":{"State":"running","Events":[{"Type":"Started","Time":1700000000000000000}]}},"AllocStates":[{"Field":"ClientStatus","Value":"unknown","Time":"2024-01-01T00:00:00Z"}]}`,
			call:  func(c *Client) (any, error) { a, _, err := c.Allocations().Info("a1", nil); return a, err },
			check: func(t *testing.T, got any) {
				a := got.(*Allocation)
				if a.TaskStates["server"].Events[0].Type != "Started" || a.AllocStates[0].Value != "unknown" {
					t.Errorf("got %+v", a)
				}
			},
		},
		{
			name: "allocation stop", route: "POST /v1/allocation/a1/stop", reply: `{"EvalID":"e9","Index":12}`,
			call: func(c *Client) (any, error) { return c.Allocations().Stop("a1", nil) },
			check: func(t *testing.T, got any) {
				if r := got.(*AllocStopResponse); r.EvalID != "e9" || r.Index != 12 {
					t.Errorf("got %+v", r)
				}
			},
		},
		{
			name: "allocation stats", route: "GET /v1/client/allocation/a1/stats",
			reply: `{"ResourceUsage":{"MemoryStats":{"RSS":1024},"CpuStats":{"Percent":12.5}}}`,
			call:  func(c *Client) (any, error) { return c.Allocations().Stats("a1", nil) },
		},
		{
			name: "evaluations list", route: "GET /v1/evaluations", reply: `[{"ID":"e1"}]`,
			call: func(c *Client) (any, error) { l, _, err := c.Evaluations().List(nil); return l, err },
		},
		{
			name: "evaluation info", route: "GET /v1/evaluation/e1",
			reply: `{"ID":"e1","Status":"blocked","FailedTGAllocs":{"web":{"ConstraintFiltered":{"${attr.kernel.name} = windows":3}}},"WaitUntil":"0001-01-01T00:00:00Z"}`,
			call:  func(c *Client) (any, error) { e, _, err := c.Evaluations().Info("e1", nil); return e, err },
			check: func(t *testing.T, got any) {
				e := got.(*Evaluation)
				if e.TerminalStatus() || e.FailedTGAllocs["web"].ConstraintFiltered["${attr.kernel.name} = windows"] != 3 {
					t.Errorf("got %+v", e)
				}
			},
		},
		{
			name: "evaluation allocations", route: "GET /v1/evaluation/e1/allocations", reply: `[{"ID":"a1"}]`,
			call: func(c *Client) (any, error) { l, _, err := c.Evaluations().Allocations("e1", nil); return l, err },
		},
		{
			name: "deployments list", route: "GET /v1/deployments", reply: `[]`,
			call: func(c *Client) (any, error) { l, _, err := c.Deployments().List(nil); return l, err },
		},
		{
			name: "deployment info", route: "GET /v1/deployment/d1",
			reply: `{"ID":"d1","Status":"running","TaskGroups":{"web":{"DesiredTotal":3,"HealthyAllocs":1,"ProgressDeadline":600000000000}}}`,
			call:  func(c *Client) (any, error) { d, _, err := c.Deployments().Info("d1", nil); return d, err },
			check: func(t *testing.T, got any) {
				d := got.(*Deployment)
				if !d.Active() || d.TaskGroups["web"].ProgressDeadline != 10*time.Minute {
					t.Errorf("got %+v", d)
				}
			},
		},
		{
			name: "deployment allocations", route: "GET /v1/deployment/allocations/d1", reply: `[]`,
			call: func(c *Client) (any, error) { l, _, err := c.Deployments().Allocations("d1", nil); return l, err },
		},
		{
			name: "leader", route: "GET /v1/status/leader", reply: `"127.0.0.1:4647"`,
			call: func(c *Client) (any, error) { return c.Status().Leader() },
			check: func(t *testing.T, got any) {
				if got.(string) != "127.0.0.1:4647" {
					t.Errorf("got %v", got)
				}
			},
		},
		{
			name: "peers", route: "GET /v1/status/peers", reply: `["127.0.0.1:4647"]`,
			call: func(c *Client) (any, error) { return c.Status().Peers() },
		},
		{
			name: "agent self", route: "GET /v1/agent/self",
			reply: `{"config":{"Region":"global"},"member":{"Name":"s1","Addr":"127.0.0.1","Port":4648,"Tags":{"region":"global"}},"stats":{"nomad":{"leader":"true"}}}`,
			call:  func(c *Client) (any, error) { return c.Agent().Self() },
			check: func(t *testing.T, got any) {
				if s := got.(*AgentSelf); s.Member.Name != "s1" || s.Stats["nomad"]["leader"] != "true" {
					t.Errorf("got %+v", s)
				}
			},
		},
		{
			name: "agent members", route: "GET /v1/agent/members",
			reply: `{"ServerName":"s1","Members":[{"Name":"s1.global","Addr":"127.0.0.1","Port":4648,"Status":"alive"}]}`,
			call:  func(c *Client) (any, error) { return c.Agent().Members() },
		},
		{
			name: "agent health", route: "GET /v1/agent/health", reply: `{"server":{"ok":true,"message":"ok"}}`,
			call: func(c *Client) (any, error) { return c.Agent().Health() },
		},
		{
			name: "raft configuration", route: "GET /v1/operator/raft/configuration",
			reply: `{"Index":5,"Servers":[{"ID":"s1","Node":"s1.global","Address":"127.0.0.1:4647","Leader":true,"Voter":true,"RaftProtocol":"3"}]}`,
			call:  func(c *Client) (any, error) { return c.Operator().RaftGetConfiguration(nil) },
			check: func(t *testing.T, got any) {
				if r := got.(*RaftConfiguration); len(r.Servers) != 1 || !r.Servers[0].Leader {
					t.Errorf("got %+v", r)
				}
			},
		},
		{
			name: "system gc", route: "PUT /v1/system/gc",
			call: func(c *Client) (any, error) { return nil, c.System().GarbageCollect(nil) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, c := newFakeAgent(t)
			f.on(tt.route, reply{Body: tt.reply, Headers: map[string]string{"X-Nomad-Index": "10"}})
			got, err := tt.call(c)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			req := f.last()
			if req.Method+" "+req.Path != tt.route {
				t.Errorf("request %s %s, want %s", req.Method, req.Path, tt.route)
			}
			for k, v := range tt.wantQuery {
				if got := req.Query.Get(k); got != v {
					t.Errorf("query %s = %q, want %q (query %v)", k, got, v, req.Query)
				}
			}
			if tt.wantBody != "" {
				if err := subsetJSON(req.Body, tt.wantBody); err != nil {
					t.Errorf("body: %v\nbody was %s", err, req.Body)
				}
			}
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

func TestHealthReturnsTheBodyOfAnUnhealthyAgent(t *testing.T) {
	f, c := newFakeAgent(t)
	f.on("GET /v1/agent/health", reply{Status: http.StatusInternalServerError, Body: `{"server":{"ok":false,"message":"no leader"}}`})
	h, err := c.Agent().Health()
	if !HasStatusCode(err, 500) {
		t.Fatalf("err = %v, want a 500", err)
	}
	if h == nil || h.Server.Ok || h.Server.Message != "no leader" {
		t.Fatalf("health = %+v", h)
	}
}
