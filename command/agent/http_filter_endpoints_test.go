package agent

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/scheduler/feasible"
	"github.com/drover-sched/drover/structs"
)

// TestFilterOnListEndpoints drives ?filter= on the jobs, nodes, allocations,
// evaluations and deployments lists of a server-only agent: two nodes (dc1
// and a "gpu" node in dc2) and three jobs (web-a and web-b in dc1, api in
// dc2 with priority 70), whose allocations stay pending (no client runs
// them).
func TestFilterOnListEndpoints(t *testing.T) {
	a := serverAgent(t)
	registerNode(t, a, nil)
	gpu := registerNode(t, a, func(n *structs.Node) { n.Datacenter, n.NodeClass = "dc2", "gpu" })
	registerJob(t, a, mockJob("web-a", 1))
	registerJob(t, a, mockJob("web-b", 1))
	apiJob := mockJob("api", 1)
	apiJob.Datacenters, apiJob.Priority = []string{"dc2"}, ptr(70)
	apiJob.Meta = map[string]string{"team": "infra"}
	apiReg := registerJob(t, a, apiJob)

	var allocs []*structs.AllocListStub
	waitUntil(t, "three allocations", func() bool {
		callOK(t, "GET", a.URL+"/v1/allocations", nil, &allocs)
		return len(allocs) == 3
	})

	// list GETs path with ?filter=expr and the extra parameters, and
	// returns the IDs listed and the next token.
	list := func(t *testing.T, path, expr, extra string) ([]string, string) {
		t.Helper()
		u := a.URL + path + "?filter=" + url.QueryEscape(expr) + extra
		var items []struct{ ID string }
		resp := callOK(t, "GET", u, nil, &items)
		var ids []string
		for _, i := range items {
			ids = append(ids, i.ID)
		}
		return ids, resp.Header.Get("X-Nomad-NextToken")
	}
	requireIDs := func(t *testing.T, path, expr string, want ...string) {
		t.Helper()
		got, _ := list(t, path, expr, "")
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s?filter=%s: got %v, want %v", path, expr, got, want)
		}
	}

	t.Run("jobs", func(t *testing.T) {
		requireIDs(t, "/v1/jobs", `Name contains "web"`, "web-a", "web-b")
		requireIDs(t, "/v1/jobs", `Datacenters contains "dc2"`, "api")
		requireIDs(t, "/v1/jobs", `Priority == 70 and Type == "service"`, "api")
		requireIDs(t, "/v1/jobs", `ID != ""`, "api", "web-a", "web-b")
		requireIDs(t, "/v1/jobs", `Status == "dead"`)
		requireIDs(t, "/v1/jobs", `Meta["team"] == "infra"`, "api")
		requireIDs(t, "/v1/jobs", `Meta["team"] != "infra"`, "web-a", "web-b")
	})

	t.Run("per_page counts matches and next_token names the next one", func(t *testing.T) {
		// Unfiltered, the first page of one ends before web-a.
		_, token := list(t, "/v1/jobs", `ID != ""`, "&per_page=1")
		if token != "web-a" {
			t.Fatalf("unfiltered next token %q, want web-a", token)
		}
		page, token := list(t, "/v1/jobs", `ID != "web-a"`, "&per_page=1")
		if !slices.Equal(page, []string{"api"}) || token != "web-b" {
			t.Fatalf("first page %v, token %q; want [api] and web-b", page, token)
		}
		page, token = list(t, "/v1/jobs", `ID != "web-a"`, "&per_page=1&next_token="+token)
		if !slices.Equal(page, []string{"web-b"}) || token != "" {
			t.Fatalf("second page %v, token %q; want [web-b] and none", page, token)
		}
		// A token taken without the filter still starts where it says.
		page, token = list(t, "/v1/jobs", `Name contains "web"`, "&per_page=5&next_token=web-b")
		if !slices.Equal(page, []string{"web-b"}) || token != "" {
			t.Fatalf("page from web-b %v, token %q", page, token)
		}
	})

	t.Run("nodes", func(t *testing.T) {
		requireIDs(t, "/v1/nodes", `Datacenter == "dc2"`, gpu.ID)
		requireIDs(t, "/v1/nodes", `Attributes["kernel.name"] == "linux" and NodeClass == "gpu"`, gpu.ID)
		requireIDs(t, "/v1/nodes", `Attributes["no.such.attribute"] == "x"`)
	})

	t.Run("allocations", func(t *testing.T) {
		var want []string
		for _, al := range allocs {
			if strings.HasPrefix(al.JobID, "web") {
				want = append(want, al.ID)
			}
		}
		requireIDs(t, "/v1/allocations", `ClientStatus == "pending" and JobID matches "^web"`, want...)
		requireIDs(t, "/v1/allocations", `ClientStatus == "failed"`)
		requireIDs(t, "/v1/allocations", `NodeID == "`+gpu.ID+`"`, allocWithJob(t, allocs, "api"))
	})

	t.Run("evaluations", func(t *testing.T) {
		requireIDs(t, "/v1/evaluations", `JobID == "api" and TriggeredBy == "job-register"`, apiReg.EvalID)
		// The count counts what the same filter lists.
		var count struct{ Count int }
		callOK(t, "GET", a.URL+"/v1/evaluations/count?filter="+url.QueryEscape(`JobID == "api" and TriggeredBy == "job-register"`), nil, &count)
		if count.Count != 1 {
			t.Fatalf("filtered eval count %d, want 1", count.Count)
		}
		callOK(t, "GET", a.URL+"/v1/evaluations/count?filter="+url.QueryEscape(`JobID == "nope"`), nil, &count)
		if count.Count != 0 {
			t.Fatalf("eval count matching nothing %d, want 0", count.Count)
		}
	})

	t.Run("deployments", func(t *testing.T) {
		// Drover's scheduler does not create deployments yet, so two are
		// written straight to the server's state store; this test only
		// reads them.
		resp := callOK(t, "GET", a.URL+"/v1/deployments", nil, nil)
		store := a.server.(nomadServer).State()
		planted := map[string]string{}
		for i, job := range []string{"web-a", "web-b"} {
			d := &structs.Deployment{ID: feasible.MockID(), JobID: job, Status: "running"}
			if err := store.Write(index(t, resp)+uint64(i), func(tx *state.Txn) error { return tx.UpsertDeployment(d) }); err != nil {
				t.Fatal(err)
			}
			planted[d.ID] = job
		}
		// The scheduler's own deployments of these jobs are listed too.
		var all []*structs.Deployment
		callOK(t, "GET", a.URL+"/v1/deployments", nil, &all)
		var want []string
		seen := 0
		for _, d := range all {
			if d.JobID == "web-a" && d.Status == "running" {
				want = append(want, d.ID)
			}
			if _, ok := planted[d.ID]; ok {
				seen++
			}
		}
		if seen != 2 || len(want) == 0 {
			t.Fatalf("deployments: %+v", all)
		}
		requireIDs(t, "/v1/deployments", `JobID == "web-a" and Status == "running"`, want...)
	})

	t.Run("a malformed expression is a 400 quoting the parser", func(t *testing.T) {
		resp, body := call(t, "GET", a.URL+"/v1/jobs?filter="+url.QueryEscape(`Status ==`), nil)
		requireStatus(t, resp, body, http.StatusBadRequest, `invalid filter "Status =="`)
		requireStatus(t, resp, body, http.StatusBadRequest, "no match found")
	})

	t.Run("a selector naming no field is a 400 naming it", func(t *testing.T) {
		for _, path := range []string{"/v1/jobs", "/v1/nodes", "/v1/allocations", "/v1/evaluations"} {
			resp, body := call(t, "GET", a.URL+path+"?filter="+url.QueryEscape(`Nope == "x"`), nil)
			requireStatus(t, resp, body, http.StatusBadRequest, `struct field with name "Nope"`)
		}
	})

	t.Run("a read that does not list refuses a filter it would ignore", func(t *testing.T) {
		resp, body := call(t, "GET", a.URL+"/v1/job/web-a/allocations?filter="+url.QueryEscape(`ID != ""`), nil)
		requireStatus(t, resp, body, http.StatusBadRequest, "only evaluated by the list endpoints")
	})
}

// allocWithJob is the ID of the one allocation of job in allocs.
func allocWithJob(t *testing.T, allocs []*structs.AllocListStub, job string) string {
	t.Helper()
	for _, al := range allocs {
		if al.JobID == job {
			return al.ID
		}
	}
	t.Fatalf("no allocation of %s in %d", job, len(allocs))
	return ""
}
