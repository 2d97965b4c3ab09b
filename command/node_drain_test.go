package command

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// drainRequestBody runs `node drain` with args and returns the body of the
// drain request it sent.
func drainRequestBody(t *testing.T, args ...string) string {
	t.Helper()
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`"}]`)
	f.json("PUT /v1/node/"+nodeID+"/drain", `{}`)
	res := runCLI(t, f, "", append([]string{"node", "drain"}, args...)...)
	if res.code != 0 {
		t.Fatalf("%v: exit %d\n%s%s", args, res.code, res.stdout, res.stderr)
	}
	reqs := f.requests("PUT /v1/node/" + nodeID + "/drain")
	if len(reqs) != 1 {
		t.Fatalf("%v: want one drain request, got %d", args, len(reqs))
	}
	return reqs[0].body
}

func TestNodeDrainSendsWhatTheFlagsSay(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"enable keeps the drained node ineligible by default", []string{"-enable", "-detach", nodeID},
			`{"DrainSpec":{"Deadline":3600000000000,"IgnoreSystemJobs":false},"MarkEligible":false}`},
		{"enable with -keep-ineligible=false asks for the node back once drained", []string{"-enable", "-keep-ineligible=false", "-detach", nodeID},
			`{"DrainSpec":{"Deadline":3600000000000},"MarkEligible":true}`},
		{"-no-deadline is a zero deadline", []string{"-enable", "-no-deadline", "-detach", nodeID},
			`{"DrainSpec":{"Deadline":0}}`},
		{"-force is a negative deadline", []string{"-enable", "-force", "-detach", nodeID},
			`{"DrainSpec":{"Deadline":-1}}`},
		{"-ignore-system leaves system allocs", []string{"-enable", "-ignore-system", "-deadline=5m", "-detach", nodeID},
			`{"DrainSpec":{"Deadline":300000000000,"IgnoreSystemJobs":true}}`},
		{"disable makes the node eligible by default", []string{"-disable", nodeID},
			`{"DrainSpec":null,"MarkEligible":true}`},
		{"disable with -keep-ineligible leaves it out", []string{"-disable", "-keep-ineligible", nodeID},
			`{"DrainSpec":null,"MarkEligible":false}`},
		{"-m keeps a message with the drain", []string{"-enable", "-m", "kernel upgrade", "-detach", nodeID},
			`{"DrainSpec":{"Deadline":3600000000000},"Meta":{"message":"kernel upgrade"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := jsonSubset(drainRequestBody(t, tc.args...), tc.want); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestNodeDrainRefusesFlagsThatDoNotGoTogether(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`"}]`)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-monitor", "-enable", nodeID}, "cannot be combined with -enable or -disable"},
		{[]string{"-monitor", "-deadline=1m", nodeID}, "takes no drain options"},
		{[]string{"-monitor", "-detach", nodeID}, "takes no drain options"},
		{[]string{"-disable", "-force", nodeID}, "apply to -enable only"},
		{[]string{"-enable", "-self", nodeID}, "With -self this command takes no <node> argument"},
		{[]string{"-enable"}, "This command takes one argument: <node> (or -self)"},
		{[]string{"-enable", "-no-deadline", "-force", nodeID}, "Only one of -deadline, -force and -no-deadline"},
		{[]string{"-enable", "-deadline=0s", nodeID}, "The -deadline must be positive"},
		{[]string{nodeID}, "Exactly one of -enable and -disable is required"},
	}
	for _, tc := range cases {
		res := runCLI(t, f, "", append([]string{"node", "drain"}, tc.args...)...)
		if res.code != 1 || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 1 and %q", tc.args, res.code, res.stderr, tc.want)
		}
	}
	if n := len(f.requests("PUT /v1/node/" + nodeID + "/drain")); n != 0 {
		t.Fatalf("a refused command line sent %d drain requests", n)
	}
}

func TestNodeDrainSelfDrainsTheAgentsNode(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/agent/self", `{"stats":{"client":{"node_id":"`+nodeID+`"}}}`)
	f.json("PUT /v1/node/"+nodeID+"/drain", `{}`)
	res := runCLI(t, f, "", "node", "drain", "-enable", "-self", "-detach")
	if res.code != 0 || len(f.requests("PUT /v1/node/"+nodeID+"/drain")) != 1 {
		t.Fatalf("exit %d, %s%s", res.code, res.stdout, res.stderr)
	}

	server := newFakeAgent(t).json("GET /v1/agent/self", `{"stats":{"nomad":{"leader":"true"}}}`)
	res = runCLI(t, server, "", "node", "drain", "-enable", "-self", "-detach")
	if res.code != 1 || !strings.Contains(res.stderr, "the agent runs no client") {
		t.Fatalf("-self on a server-only agent: exit %d, stderr %q", res.code, res.stderr)
	}
}

// -monitor follows a drain someone else started, changes nothing, shows
// the progress counts and exits 0 when the drain completes.
func TestNodeDrainMonitorFollowsWithoutChanging(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`"}]`)
	deadline := testNow.Add(30 * time.Minute).Format(time.RFC3339)
	draining := strings.Replace(nodeJSON, `"Status":"ready"`, `"Status":"ready","DrainStrategy":{"Deadline":3600000000000,"ForceDeadline":"`+deadline+`"}`, 1)
	drained := strings.Replace(nodeJSON, `"Status":"ready"`, `"Status":"ready","LastDrain":{"Status":"complete"}`, 1)
	f.on("GET /v1/node/"+nodeID, reply{body: draining, index: 30}, reply{body: drained, index: 40})
	migrated := strings.Replace(nodeAllocs("complete", "stop"), `"DesiredStatus"`, `"DesiredTransition":{"Migrate":true},"DesiredStatus"`, 1)
	f.on("GET /v1/node/"+nodeID+"/allocations",
		reply{body: nodeAllocs("running", "run"), index: 30},
		reply{body: migrated, index: 40})

	res := runCLI(t, f, "", "node", "drain", "-monitor", nodeID)
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	// The two watchers' answers interleave as they come; whichever came
	// first, the counts were shown with the deadline.
	progress := regexp.MustCompile(`Node "f1e2d3c4": [01] allocations? migrated, [01] allocations? remaining, deadline in 30m0s`)
	if !progress.MatchString(res.stdout) {
		t.Errorf("no progress line with counts and deadline\n%s", res.stdout)
	}
	for _, want := range []string{
		`Node "f1e2d3c4" drain complete`,
		`All allocations on node "f1e2d3c4" have stopped`,
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("output lacks %q\n%s", want, res.stdout)
		}
	}
	if n := len(f.requests("PUT /v1/node/" + nodeID + "/drain")); n != 0 {
		t.Fatalf("-monitor sent %d drain requests", n)
	}
}

// A drain canceled while followed is not a success.
func TestNodeDrainMonitorFailsWhenTheDrainIsCanceled(t *testing.T) {
	f := newFakeAgent(t).json("GET /v1/nodes", `[{"ID":"`+nodeID+`"}]`)
	canceled := strings.Replace(nodeJSON, `"Status":"ready"`, `"Status":"ready","LastDrain":{"Status":"canceled"}`, 1)
	f.on("GET /v1/node/"+nodeID, reply{body: canceled, index: 40})
	f.on("GET /v1/node/"+nodeID+"/allocations", reply{body: nodeAllocs("running", "run"), index: 40})
	res := runCLI(t, f, "", "node", "drain", "-monitor", nodeID)
	if res.code != 1 || !strings.Contains(res.stdout, `drain canceled`) || strings.Contains(res.stdout, "have stopped") {
		t.Fatalf("exit %d, want 1 and no claim that everything stopped\n%s", res.code, res.stdout)
	}
}

func TestDrainProgressCountsWhatMustMove(t *testing.T) {
	sys, svc := api.JobTypeSystem, api.JobTypeService
	alloc := func(client, typ string, migrate bool) *api.Allocation {
		a := &api.Allocation{ClientStatus: client, Job: &api.Job{Type: &typ}}
		if migrate {
			a.DesiredTransition.Migrate = &migrate
		}
		return a
	}
	allocs := []*api.Allocation{
		alloc("complete", svc, true),  // migrated
		alloc("complete", svc, false), // finished on its own: not a migration
		alloc("running", svc, true),   // on its way
		alloc("running", sys, false),
	}
	got := drainCounts(allocs, &api.DrainStrategy{})
	if want := "1 allocation migrated, 2 allocations remaining"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got = drainCounts(allocs, &api.DrainStrategy{DrainSpec: api.DrainSpec{IgnoreSystemJobs: true}})
	if want := "1 allocation migrated, 1 allocation remaining"; got != want {
		t.Errorf("with -ignore-system: got %q, want %q", got, want)
	}
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		s    *api.DrainStrategy
		want string
	}{
		{&api.DrainStrategy{DrainSpec: api.DrainSpec{Deadline: -1}, ForceDeadline: now}, "forced"},
		{&api.DrainStrategy{}, "no deadline"},
		{&api.DrainStrategy{DrainSpec: api.DrainSpec{Deadline: time.Hour}, ForceDeadline: now.Add(90 * time.Second)}, "deadline in 1m30s"},
		{&api.DrainStrategy{DrainSpec: api.DrainSpec{Deadline: time.Hour}, ForceDeadline: now.Add(-time.Second)}, "deadline passed"},
	} {
		if got := drainDeadline(tc.s, now); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.s, got, tc.want)
		}
	}
}
