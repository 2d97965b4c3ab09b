package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/drover-sched/drover/api"
	"github.com/drover-sched/drover/command/agent/config"
	"github.com/drover-sched/drover/command/agent/httpapi"
	"github.com/drover-sched/drover/structs"
)

// aclDevAgent starts a dev agent (server and client) with ACLs on and
// returns it with a management token.
func aclDevAgent(t *testing.T) (*TestAgent, string) {
	t.Helper()
	a := NewTestAgent(t, func(c *config.Config) { c.ACL.Enabled = true })
	return a, bootstrapToken(t, a)
}

func bootstrapToken(t *testing.T, a *TestAgent) string {
	t.Helper()
	var boot structs.ACLToken
	callOK(t, "PUT", a.URL+"/v1/acl/bootstrap", nil, &boot)
	return boot.SecretID
}

// callAs is call with an X-Nomad-Token.
func callAs(t *testing.T, token, method, url string, body any) (*http.Response, []byte) {
	t.Helper()
	var r *strings.Reader
	switch b := body.(type) {
	case nil:
		r = strings.NewReader("")
	case string:
		r = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = strings.NewReader(string(buf))
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("X-Nomad-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	buf := make([]byte, 32*1024)
	for {
		n, err := resp.Body.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, []byte(out.String())
}

// putPolicy writes an ACL policy and returns a client token holding it.
func putPolicy(t *testing.T, a *TestAgent, mgmt, name, rules string) string {
	t.Helper()
	resp, body := callAs(t, mgmt, "PUT", a.URL+"/v1/acl/policy/"+name, map[string]string{"Name": name, "Rules": rules})
	if resp.StatusCode != 200 {
		t.Fatalf("policy %s: %d %s", name, resp.StatusCode, body)
	}
	resp, body = callAs(t, mgmt, "PUT", a.URL+"/v1/acl/token", map[string]any{"Name": name, "Type": "client", "Policies": []string{name}})
	if resp.StatusCode != 200 {
		t.Fatalf("token %s: %d %s", name, resp.StatusCode, body)
	}
	var tok structs.ACLToken
	if err := json.Unmarshal(body, &tok); err != nil {
		t.Fatal(err)
	}
	return tok.SecretID
}

func latestServerIndex(t *testing.T, a *TestAgent) uint64 {
	t.Helper()
	idx, err := a.server.(nomadServer).State().LatestIndex()
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// routesNotChecked lists the routes a request without a token may use,
// with the status it gets. Every other route must answer 403:
// TestEveryHTTPRouteRefusesARequestWithoutAToken fails for a new route
// until it checks (in its RPC or in httpapi/http_acl_check.go) or is listed here.
var routesNotChecked = map[string]int{
	"GET /v1/agent/health":   200, // as Nomad: health checks carry no token
	"GET /v1/status/leader":  200, // as Nomad
	"GET /v1/status/peers":   200, // as Nomad
	"GET /v1/regions":        200, // as Nomad
	"GET /v1/namespaces":     200, // filtered: lists none for this token
	"GET /v1/acl/policies":   200, // filtered: the token's own policies
	"GET /v1/acl/token/self": 200, // the anonymous token
	"PUT /v1/acl/bootstrap":  400, // open until done; the test bootstrapped
	"POST /v1/acl/bootstrap": 400,
}

// routeBodies are bodies that get each route past its body's decoding,
// so what answers is the token check.
var routeBodies = map[string]any{
	"/v1/jobs":                             api.JobRegisterRequest{Job: mockJob("acl-route", 1)},
	"/v1/job/{id}":                         api.JobRegisterRequest{Job: mockJob(routeID, 1)},
	"/v1/job/{id}/plan":                    api.JobPlanRequest{Job: mockJob(routeID, 1)},
	"/v1/validate/job":                     api.JobValidateRequest{Job: mockJob("acl-route", 1)},
	"/v1/jobs/parse":                       api.JobsParseRequest{JobHCL: `job "x" {}`},
	"/v1/job/{id}/revert":                  map[string]any{"JobID": routeID, "JobVersion": 0},
	"/v1/job/{id}/stable":                  map[string]any{"JobID": routeID, "JobVersion": 0, "Stable": true},
	"/v1/job/{id}/scale":                   map[string]any{"Count": 2, "Target": map[string]string{"Group": "web"}},
	"/v1/node/{id}/drain":                  map[string]any{"DrainSpec": map[string]any{"Deadline": 0}},
	"/v1/node/{id}/eligibility":            map[string]any{"Eligibility": "ineligible"},
	"/v1/operator/scheduler/configuration": map[string]any{"SchedulerAlgorithm": "binpack"},
	"/v1/search":                           map[string]any{"Prefix": "", "Context": "all"},
	"/v1/client/allocation/{alloc}/signal": map[string]any{"Signal": "SIGUSR1"},
	"/v1/acl/policy/{name}":                map[string]any{"Rules": `node { policy = "read" }`},
	"/v1/acl/token":                        map[string]any{"Type": "management"},
	"/v1/acl/token/{id}":                   map[string]any{"Type": "management"},
}

// routeQueries are query strings that get a route past its parameters'
// checks.
var routeQueries = map[string]string{
	"/v1/client/fs/logs/{alloc}":   "?task=app&type=stdout",
	"/v1/client/fs/stat/{alloc}":   "?path=alloc",
	"/v1/client/fs/cat/{alloc}":    "?path=alloc/x",
	"/v1/client/fs/readat/{alloc}": "?path=alloc/x&offset=0&limit=1",
	"/v1/operator/raft/peer":       "?id=" + routeID,
}

// routeID stands for every path parameter: an ID no object has.
const routeID = "00000000-0000-4000-8000-00000000acl0"

// Every HTTP route checks the token: with ACLs on and an anonymous
// policy that grants nothing, a request without a token gets a 403 with
// "Permission denied" from every route but those in routesNotChecked, and
// the server's state does not move. The routes are the ones the API
// registers, so a route added without a check fails this test.
func TestEveryHTTPRouteRefusesARequestWithoutAToken(t *testing.T) {
	a, mgmt := aclDevAgent(t)
	resp, body := callAs(t, mgmt, "PUT", a.URL+"/v1/acl/policy/anonymous", map[string]string{"Rules": `node { policy = "deny" }`})
	if resp.StatusCode != 200 {
		t.Fatalf("anonymous policy: %d %s", resp.StatusCode, body)
	}
	routes := httpapi.Routes(httpapi.Deps{Info: a.info})
	if len(routes) < 60 {
		t.Fatalf("only %d routes registered; the walk is broken", len(routes))
	}
	seen := map[string]bool{}
	for _, route := range routes {
		seen[route] = true
		method, pattern, _ := strings.Cut(route, " ")
		path := strings.NewReplacer("{id}", routeID, "{alloc}", routeID, "{name}", "default").Replace(pattern) + routeQueries[pattern]
		var body any
		if method != http.MethodGet && method != http.MethodDelete {
			body = routeBodies[pattern]
		}
		before := latestServerIndex(t, a)
		resp, got := callAs(t, "", method, a.URL+path, body)
		if want, ok := routesNotChecked[route]; ok {
			if resp.StatusCode != want {
				t.Errorf("%s: status %d, want %d: %s", route, resp.StatusCode, want, got)
			}
			continue
		}
		if resp.StatusCode != http.StatusForbidden || !strings.HasPrefix(string(got), "Permission denied") {
			t.Errorf("%s without a token: %d %q; want 403 Permission denied (check the token in the endpoint's RPC or "+
				"in httpapi/http_acl_check.go, or list the route in routesNotChecked)", route, resp.StatusCode, got)
		}
		if after := latestServerIndex(t, a); after != before {
			t.Errorf("%s: a refused request moved the state from %d to %d", route, before, after)
		}
	}
	for route := range routesNotChecked {
		if !seen[route] {
			t.Errorf("routesNotChecked lists %s, which is not a route", route)
		}
	}
}

func decodeInto(body []byte, out any) error { return json.Unmarshal(body, out) }

// registerJobAs registers job through the HTTP API with token.
func registerJobAs(t *testing.T, a *TestAgent, token string, job *api.Job) {
	t.Helper()
	resp, body := callAs(t, token, "PUT", a.URL+"/v1/jobs", api.JobRegisterRequest{Job: job})
	if resp.StatusCode != 200 {
		t.Fatalf("register %s: %d %s", *job.ID, resp.StatusCode, body)
	}
}

// waitRunningAs waits, reading with token, until the job's one alloc
// runs, and returns its ID.
func waitRunningAs(t *testing.T, a *TestAgent, token, jobID string) string {
	t.Helper()
	var allocs []*structs.AllocListStub
	waitUntil(t, jobID+" running", func() bool {
		resp, body := callAs(t, token, "GET", a.URL+"/v1/job/"+jobID+"/allocations", nil)
		if resp.StatusCode != 200 || decodeInto(body, &allocs) != nil {
			t.Fatalf("allocations of %s: %d %s", jobID, resp.StatusCode, body)
		}
		return len(allocs) == 1 && allocs[0].ClientStatus == structs.AllocClientStatusRunning
	})
	return allocs[0].ID
}
