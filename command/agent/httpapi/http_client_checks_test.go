package httpapi

import (
	"strings"
	"testing"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/client/checks"
)

// checksClient is a fake client whose allocation has one check.
type checksClient struct{ fakeClient }

func (c *checksClient) AllocChecks(allocID string) (map[string]checks.Result, error) {
	return map[string]checks.Result{"c0ffee": {ID: "c0ffee", Check: "alive", Group: "web", Mode: checks.ModeHealthiness,
		Output: "HTTP GET http://127.0.0.1:8080/health: 200 OK", Service: "front", Status: checks.StatusSuccess,
		StatusCode: 200, Timestamp: 1_800_000_000}}, nil
}

// Nomad's Go client reads an allocation's checks through any agent: the
// request is forwarded to the agent that runs the allocation.
func TestAllocChecksInNomadsShapeThroughAnyAgent(t *testing.T) {
	var bAddr string
	owner := &checksClient{fakeClient{nodeID: "node-b", runs: testAllocID}}
	b := fakeAPI(t, allocRPC("node-b", &bAddr), owner)
	bAddr = strings.TrimPrefix(b.URL, "http://")
	a := fakeAPI(t, allocRPC("node-b", &bAddr), nil)

	nc, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL})
	if err != nil {
		t.Fatal(err)
	}
	got, err := nc.Allocations().Checks(testAllocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := nomadapi.AllocCheckStatus{ID: "c0ffee", Check: "alive", Group: "web", Mode: "healthiness",
		Output: "HTTP GET http://127.0.0.1:8080/health: 200 OK", Service: "front", Status: "success", StatusCode: 200, Timestamp: 1_800_000_000}
	if len(got) != 1 || got["c0ffee"] != want {
		t.Fatalf("checks %+v, want %+v", got, want)
	}

	// A client that runs no checks says so.
	plain := fakeAPI(t, allocRPC("node-b", &bAddr), &fakeClient{nodeID: "node-b", runs: testAllocID})
	resp, body := call(t, "GET", plain.URL+"/v1/client/allocation/"+testAllocID+"/checks", nil)
	if resp.StatusCode != 501 || !strings.Contains(string(body), "runs no service checks") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
