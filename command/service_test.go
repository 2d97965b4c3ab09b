package command

import (
	"strings"
	"testing"
)

const serviceRegsJSON = `[{"ID":"_nomad-task-` + allocID + `-group-web-web-http","ServiceName":"web","Namespace":"default",
	"NodeID":"` + nodeID + `","Datacenter":"dc1","JobID":"shop","AllocID":"` + allocID + `","Tags":["v1","live"],
	"Address":"10.0.0.1","Port":25001,"CreateIndex":40,"ModifyIndex":41}]`

func TestServiceListShowsNamesAndTags(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/services", `[{"Namespace":"default","Services":[
		{"ServiceName":"web","Tags":["v1","live"]},{"ServiceName":"db","Tags":[]}]}]`)
	res := runCLI(t, f, "", "service", "list")
	wantLines(t, res.stdout,
		"Service Name  Tags",
		"web           [live,v1]",
		"db            []",
	)
	all := runCLI(t, f, "", "service", "list", "-namespace=*")
	if !strings.Contains(all.stdout, "Service Name  Namespace  Tags") {
		t.Fatalf("a list over every namespace has no Namespace column:\n%s", all.stdout)
	}
	if q := f.requests("GET /v1/services"); len(q) != 2 || q[1].query.Get("namespace") != "*" {
		t.Fatalf("requests %+v, want the second for namespace *", q)
	}
}

func TestServiceInfoShowsEachInstance(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/service/web", serviceRegsJSON)
	res := runCLI(t, f, "", "service", "info", "web")
	wantLines(t, res.stdout,
		"Job ID  Address         Tags       Node ID   Alloc ID",
		"shop    10.0.0.1:25001  [v1,live]  "+nodeID[:8]+"  "+allocID[:8],
	)
	verbose := runCLI(t, f, "", "service", "info", "-verbose", "web")
	wantLines(t, verbose.stdout,
		"ID           = _nomad-task-"+allocID+"-group-web-web-http",
		"Service Name = web",
		"Namespace    = default",
		"Job ID       = shop",
		"Alloc ID     = "+allocID,
		"Node ID      = "+nodeID,
		"Datacenter   = dc1",
		"Address      = 10.0.0.1:25001",
		"Tags         = [v1,live]",
	)
	if res := runCLI(t, newFakeAgent(t).json("GET /v1/service/none", `[]`), "", "service", "info", "none"); !strings.Contains(res.stdout, "No service registrations found") {
		t.Fatalf("empty service: %q", res.stdout)
	}
	if res := runCLI(t, f, "", "service", "info"); res.code != 1 || !strings.Contains(res.stderr, "<service name>") {
		t.Fatalf("no argument: exit %d %q", res.code, res.stderr)
	}
}

func TestServiceDeleteDeletesOneRegistration(t *testing.T) {
	id := "_nomad-task-" + allocID + "-group-web-web-http"
	f := newFakeAgent(t).on("DELETE /v1/service/web/"+id, reply{status: 200, index: 42})
	res := runCLI(t, f, "", "service", "delete", "web", id)
	if res.code != 0 || !strings.Contains(res.stdout, "Successfully deleted service registration") {
		t.Fatalf("exit %d: %s%s", res.code, res.stdout, res.stderr)
	}
	if n := len(f.requests("DELETE /v1/service/web/" + id)); n != 1 {
		t.Fatalf("%d delete requests", n)
	}
}
