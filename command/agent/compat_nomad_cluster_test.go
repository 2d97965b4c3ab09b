package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"

	"github.com/drover-sched/drover/command/agent/config"
)

// mockServiceJob is a one-task service job on the mock driver that prints
// out and runs for an hour.
func mockServiceJob(id, out string) *nomadapi.Job {
	job := nomadapi.NewServiceJob(id, id, "global", 50).AddDatacenter("dc1")
	task := nomadapi.NewTask("app", "mock_driver").SetConfig("run_for", "1h").SetConfig("stdout_string", out)
	task.Require(&nomadapi.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	tg := nomadapi.NewTaskGroup("web", 1).AddTask(task)
	tg.Networks = []*nomadapi.NetworkResource{{DynamicPorts: []nomadapi.Port{{Label: "http", To: 8080}}}}
	job.AddTaskGroup(tg)
	return job
}

// TestNomadClientNodesAllocsEvals drives the node, allocation and
// evaluation endpoints with Nomad's client.
func TestNomadClientNodesAllocsEvals(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	reg, _, err := c.Jobs().Register(mockServiceJob("svc", "svc output\n"), nil)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	allocs := nomadJobAllocs(t, c, "svc", 1, "svc to run", clientStatus("running"))
	alloc := allocs[0]

	t.Run("nodes", func(t *testing.T) {
		nodes, qm, err := c.Nodes().List(nil)
		if err != nil || len(nodes) != 1 || qm.LastIndex == 0 {
			t.Fatalf("list: %v %+v", err, nodes)
		}
		n := nodes[0]
		if n.ID != a.NodeID() || n.Name != a.config.Name || n.Datacenter != "dc1" || n.Status != "ready" ||
			n.SchedulingEligibility != "eligible" || n.Drivers["mock_driver"] == nil || !n.Drivers["mock_driver"].Healthy ||
			n.NodeResources == nil || n.NodeResources.Cpu.CpuShares == 0 || n.Address == "" || n.NodePool == "" {
			t.Fatalf("node stub: %+v", n)
		}
		stubs, _, err := c.Nodes().PrefixList(a.NodeID()[:4])
		if err != nil || len(stubs) != 1 {
			t.Fatalf("prefix list: %v %+v", err, stubs)
		}

		node, _, err := c.Nodes().Info(a.NodeID(), nil)
		if err != nil {
			t.Fatalf("info: %v", err)
		}
		if node.NodeResources == nil || node.NodeResources.Memory.MemoryMB == 0 || node.NodeResources.Cpu.CpuShares == 0 ||
			node.ReservedResources == nil || node.Drivers["raw_exec"] == nil || !node.Drivers["raw_exec"].Detected ||
			node.Attributes["kernel.name"] == "" || node.Attributes["driver.mock_driver"] == "" ||
			node.Datacenter != "dc1" || node.Status != "ready" || node.HTTPAddr != a.Addr || len(node.Events) == 0 || node.CreateIndex == 0 {
			t.Fatalf("info: %+v", node)
		}
		if len(node.NodeResources.Networks) == 0 || node.NodeResources.MaxDynamicPort == 0 {
			t.Fatalf("node has no networks: %+v", node.NodeResources)
		}
		if node.Events[0].Message == "" || node.Events[0].Subsystem == "" || node.Events[0].Timestamp.IsZero() {
			t.Fatalf("node event: %+v", node.Events[0])
		}

		nallocs, _, err := c.Nodes().Allocations(a.NodeID(), nil)
		if err != nil || len(nallocs) != 1 || nallocs[0].ID != alloc.ID || nallocs[0].Job == nil {
			t.Fatalf("node allocations: %v %+v", err, nallocs)
		}

		// Drain with a spec, then stop draining.
		events := len(node.Events)
		dr, err := c.Nodes().UpdateDrainOpts(a.NodeID(), &nomadapi.DrainOptions{
			DrainSpec: &nomadapi.DrainSpec{Deadline: time.Hour, IgnoreSystemJobs: true},
			Meta:      map[string]string{"reason": "compat"},
		}, nil)
		if err != nil || dr.NodeModifyIndex == 0 || dr.LastIndex == 0 {
			t.Fatalf("drain: %v %+v", err, dr)
		}
		node, _, err = c.Nodes().Info(a.NodeID(), nil)
		if err != nil || node.DrainStrategy == nil || node.DrainStrategy.Deadline != time.Hour || !node.DrainStrategy.IgnoreSystemJobs ||
			node.SchedulingEligibility != "ineligible" || len(node.Events) <= events {
			t.Fatalf("draining node: %v %+v", err, node)
		}
		if node.LastDrain == nil || node.LastDrain.Status != "draining" || node.LastDrain.StartedAt.IsZero() {
			t.Fatalf("last drain: %+v", node.LastDrain)
		}
		if _, err := c.Nodes().UpdateDrain(a.NodeID(), nil, true, nil); err != nil {
			t.Fatalf("stop drain: %v", err)
		}
		node, _, err = c.Nodes().Info(a.NodeID(), nil)
		if err != nil || node.DrainStrategy != nil || node.SchedulingEligibility != "eligible" {
			t.Fatalf("undrained node: %v %+v", err, node)
		}
		el, err := c.Nodes().ToggleEligibility(a.NodeID(), false, nil)
		if err != nil || el.NodeModifyIndex == 0 {
			t.Fatalf("ineligible: %v %+v", err, el)
		}
		node, _, err = c.Nodes().Info(a.NodeID(), nil)
		if err != nil || node.SchedulingEligibility != "ineligible" {
			t.Fatalf("ineligible node: %v %+v", err, node)
		}
		if _, err := c.Nodes().ToggleEligibility(a.NodeID(), true, nil); err != nil {
			t.Fatalf("eligible: %v", err)
		}
		evalID, _, err := c.Nodes().ForceEvaluate(a.NodeID(), nil)
		if err != nil || evalID == "" {
			t.Fatalf("node evaluate: %v %q", err, evalID)
		}
	})

	t.Run("allocations", func(t *testing.T) {
		list, qm, err := c.Allocations().List(nil)
		if err != nil || len(list) != 1 || list[0].ID != alloc.ID || qm.LastIndex == 0 {
			t.Fatalf("list: %v %+v", err, list)
		}
		pl, _, err := c.Allocations().PrefixList(alloc.ID[:6])
		if err != nil || len(pl) != 1 {
			t.Fatalf("prefix list: %v %+v", err, pl)
		}
		if alloc.EvalID != reg.EvalID || alloc.JobID != "svc" || alloc.Job == nil || *alloc.Job.ID != "svc" ||
			alloc.NodeName != a.config.Name || alloc.DesiredStatus != "run" || alloc.CreateTime == 0 || alloc.Namespace != "default" {
			t.Fatalf("info: %+v", alloc)
		}
		ts := alloc.TaskStates["app"]
		if ts == nil || ts.State != "running" || ts.StartedAt.IsZero() || len(ts.Events) < 2 {
			t.Fatalf("task state: %+v", ts)
		}
		for _, e := range ts.Events {
			if e.Type == "" || e.Time == 0 {
				t.Fatalf("task event: %+v", e)
			}
		}
		ar := alloc.AllocatedResources
		if ar == nil || len(ar.Shared.Ports) != 1 || ar.Shared.Ports[0].Label != "http" || ar.Shared.Ports[0].To != 8080 ||
			ar.Shared.Ports[0].Value == 0 || ar.Tasks["app"] == nil || ar.Tasks["app"].Cpu.CpuShares != 100 || ar.Tasks["app"].Memory.MemoryMB != 64 {
			t.Fatalf("allocated resources: %+v", ar)
		}
		if alloc.Metrics == nil || alloc.Metrics.NodesEvaluated == 0 {
			t.Fatalf("metrics: %+v", alloc.Metrics)
		}
		if out := nomadLogs(t, c, alloc, "app", "stdout"); out != "svc output\n" {
			t.Fatalf("logs: %q", out)
		}
		stats, err := c.Allocations().Stats(alloc, nil)
		if err != nil || stats.Tasks["app"] == nil || stats.Tasks["app"].ResourceUsage == nil ||
			stats.Tasks["app"].ResourceUsage.MemoryStats == nil || stats.Timestamp == 0 {
			t.Fatalf("stats: %v %+v", err, stats)
		}
	})

	t.Run("evaluations", func(t *testing.T) {
		evals, qm, err := c.Evaluations().List(nil)
		if err != nil || len(evals) == 0 || qm.LastIndex == 0 {
			t.Fatalf("list: %v %+v", err, evals)
		}
		count, _, err := c.Evaluations().Count(nil)
		if err != nil || count.Count != len(evals) {
			t.Fatalf("count: %v %+v, listed %d", err, count, len(evals))
		}
		pl, _, err := c.Evaluations().PrefixList(reg.EvalID[:6])
		if err != nil || len(pl) != 1 || pl[0].ID != reg.EvalID {
			t.Fatalf("prefix list: %v %+v", err, pl)
		}
		ev, _, err := c.Evaluations().Info(reg.EvalID, nil)
		if err != nil || ev.JobID != "svc" || ev.Status != "complete" || ev.Type != "service" || ev.TriggeredBy != "job-register" ||
			ev.Priority != 50 || ev.Namespace != "default" || ev.CreateIndex == 0 || ev.CreateTime == 0 {
			t.Fatalf("info: %v %+v", err, ev)
		}
		eallocs, _, err := c.Evaluations().Allocations(reg.EvalID, nil)
		if err != nil || len(eallocs) != 1 || eallocs[0].ID != alloc.ID {
			t.Fatalf("eval allocations: %v %+v", err, eallocs)
		}
	})

	t.Run("search", func(t *testing.T) {
		res, qm, err := c.Search().PrefixSearch(alloc.ID[:6], contexts.Allocs, nil)
		if err != nil || len(res.Matches[contexts.Allocs]) != 1 || res.Matches[contexts.Allocs][0] != alloc.ID ||
			res.Truncations[contexts.Allocs] || qm.LastIndex == 0 {
			t.Fatalf("alloc prefix search: %v %+v", err, res)
		}
		res, _, err = c.Search().PrefixSearch("sv", contexts.All, nil)
		if err != nil || len(res.Matches[contexts.Jobs]) != 1 || res.Matches[contexts.Jobs][0] != "svc" ||
			len(res.Matches[contexts.Nodes]) != 0 || len(res.Matches[contexts.Evals]) != 0 {
			t.Fatalf("all prefix search: %v %+v", err, res)
		}
		res, _, err = c.Search().PrefixSearch(a.NodeID()[:8], contexts.All, nil)
		if err != nil || len(res.Matches[contexts.Nodes]) != 1 || res.Matches[contexts.Nodes][0] != a.NodeID() {
			t.Fatalf("node prefix search: %v %+v", err, res)
		}
		res, _, err = c.Search().PrefixSearch(reg.EvalID[:8], contexts.Evals, nil)
		if err != nil || len(res.Matches[contexts.Evals]) != 1 || res.Matches[contexts.Evals][0] != reg.EvalID {
			t.Fatalf("eval prefix search: %v %+v", err, res)
		}
	})

	t.Run("stop an allocation", func(t *testing.T) {
		st, err := c.Allocations().Stop(alloc, nil)
		if err != nil || st.EvalID == "" || st.LastIndex == 0 {
			t.Fatalf("stop: %v %+v", err, st)
		}
		// The service job gets a replacement; the stopped alloc is stopped.
		waitUntil(t, "the stopped alloc to stop and a replacement to run", func() bool {
			stubs, _, err := c.Jobs().Allocations("svc", true, nil)
			if err != nil {
				t.Fatal(err)
			}
			var stopped, running bool
			for _, s := range stubs {
				stopped = stopped || s.ID == alloc.ID && s.DesiredStatus == "stop" && s.ClientStatus == "complete"
				running = running || s.ID != alloc.ID && s.ClientStatus == "running"
			}
			return stopped && running
		})
		got, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil || got.DesiredStatus != "stop" || got.TaskStates["app"].State != "dead" || got.TaskStates["app"].FinishedAt.IsZero() {
			t.Fatalf("stopped alloc: %v %+v", err, got)
		}
	})
}

// TestNomadClientClusterEndpoints covers status, agent, operator, system,
// region and namespace endpoints.
func TestNomadClientClusterEndpoints(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)

	leader, err := c.Status().Leader()
	if err != nil || leader != a.RPCAddr() {
		t.Fatalf("leader: %v %q", err, leader)
	}
	rl, err := c.Status().RegionLeader("global")
	if err != nil || rl != a.RPCAddr() {
		t.Fatalf("region leader: %v %q", err, rl)
	}
	peers, err := c.Status().Peers()
	if err != nil || len(peers) != 1 || peers[0] != a.RPCAddr() {
		t.Fatalf("peers: %v %v", err, peers)
	}

	self, err := c.Agent().Self()
	if err != nil || self.Member.Name == "" || self.Config["Region"] != "global" || self.Config["Datacenter"] != "dc1" ||
		self.Stats["client"]["node_id"] != a.NodeID() {
		t.Fatalf("self: %v %+v", err, self)
	}
	if name, err := c.Agent().NodeName(); err != nil || name == "" {
		t.Fatalf("node name: %v %q", err, name)
	}
	if dc, err := c.Agent().Datacenter(); err != nil || dc != "dc1" {
		t.Fatalf("datacenter: %v %q", err, dc)
	}
	if reg, err := c.Agent().Region(); err != nil || reg != "global" {
		t.Fatalf("region: %v %q", err, reg)
	}
	members, err := c.Agent().Members()
	if err != nil || len(members.Members) != 1 || members.Members[0].Status != "alive" || members.Members[0].Tags["region"] != "global" {
		t.Fatalf("members: %v %+v", err, members)
	}
	servers, err := c.Agent().Servers()
	if err != nil || len(servers) == 0 {
		t.Fatalf("servers: %v %v", err, servers)
	}
	health, err := c.Agent().Health()
	if err != nil || health.Server == nil || !health.Server.Ok || health.Client == nil || !health.Client.Ok {
		t.Fatalf("health: %v %+v", err, health)
	}

	raft, err := c.Operator().RaftGetConfiguration(nil)
	if err != nil || len(raft.Servers) != 1 || !raft.Servers[0].Leader || !raft.Servers[0].Voter || raft.Servers[0].Address != a.RPCAddr() {
		t.Fatalf("raft: %v %+v", err, raft)
	}
	if err := c.System().GarbageCollect(); err != nil {
		t.Fatalf("gc: %v", err)
	}
	regions, err := c.Regions().List()
	if err != nil || len(regions) != 1 || regions[0] != "global" {
		t.Fatalf("regions: %v %v", err, regions)
	}
	pools, _, err := c.NodePools().List(nil)
	if err != nil || len(pools) != 2 || pools[0].Name != "all" || pools[1].Name != "default" {
		t.Fatalf("node pools: %v %+v", err, pools)
	}
	nss, _, err := c.Namespaces().List(nil)
	if err != nil || len(nss) != 1 || nss[0].Name != "default" {
		t.Fatalf("namespaces: %v %+v", err, nss)
	}
	ns, _, err := c.Namespaces().Info("default", nil)
	if err != nil || ns.Name != "default" {
		t.Fatalf("namespace: %v %+v", err, ns)
	}
}

// TestNomadClientBlockingAndErrors checks blocking queries and the errors
// Nomad's client reports.
func TestNomadClientBlockingAndErrors(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := nomadClient(t, a)
	jobs := c.Jobs()

	job := mockServiceJob("blocking", "x")
	if _, _, err := jobs.Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	got, qm, err := jobs.Info("blocking", nil)
	if err != nil || qm.LastIndex == 0 || !qm.KnownLeader {
		t.Fatalf("info: %v %+v", err, qm)
	}

	// A blocking read returns once the job changes, with the new index.
	type result struct {
		job *nomadapi.Job
		qm  *nomadapi.QueryMeta
		err error
	}
	done := make(chan result, 1)
	go func() {
		j, m, err := jobs.Info("blocking", &nomadapi.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 30 * time.Second})
		done <- result{j, m, err}
	}()
	job.SetMeta("changed", "yes")
	reg, _, err := jobs.Register(job, nil)
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	r := <-done
	if r.err != nil || r.qm.LastIndex <= qm.LastIndex || !r.qm.KnownLeader || r.job.Meta["changed"] != "yes" || *r.job.Version != *got.Version+1 {
		t.Fatalf("blocking info: %v %+v %+v", r.err, r.qm, r.job)
	}
	if r.qm.LastIndex < reg.JobModifyIndex {
		t.Fatalf("blocking info index %d is before the update %d", r.qm.LastIndex, reg.JobModifyIndex)
	}
	// A blocking read that sees no change returns at its wait time with
	// the same index.
	start := time.Now()
	_, qm2, err := jobs.Info("blocking", &nomadapi.QueryOptions{WaitIndex: r.qm.LastIndex, WaitTime: 100 * time.Millisecond})
	if err != nil || qm2.LastIndex != r.qm.LastIndex || time.Since(start) < 90*time.Millisecond {
		t.Fatalf("idle blocking info: %v %+v after %s", err, qm2, time.Since(start))
	}
	// Blocking lists too.
	evals, eqm, err := c.Evaluations().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	listDone := make(chan error, 1)
	go func() {
		// A blocking list wakes on any write to the evals table: the
		// worker finishing the update's eval may come before the new
		// job's eval. Each wake must move the index on; the new eval
		// must arrive within a few wakes.
		index := eqm.LastIndex
		for wake := 0; wake < 5; wake++ {
			more, m, err := c.Evaluations().List(&nomadapi.QueryOptions{WaitIndex: index, WaitTime: 30 * time.Second})
			if err != nil {
				listDone <- err
				return
			}
			if m.LastIndex <= index {
				listDone <- fmt.Errorf("blocking list returned index %d, not past %d", m.LastIndex, index)
				return
			}
			if len(more) > len(evals) {
				listDone <- nil
				return
			}
			index = m.LastIndex
		}
		listDone <- fmt.Errorf("blocking list woke 5 times without the new job's eval (had %d evals)", len(evals))
	}()
	if _, _, err := jobs.Register(mockServiceJob("other", "y"), nil); err != nil {
		t.Fatal(err)
	}
	if err := <-listDone; err != nil {
		t.Fatalf("blocking eval list: %v", err)
	}

	// A client configured with a region and namespace, as NOMAD_REGION and
	// NOMAD_NAMESPACE do, sends them on every request.
	scoped, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL, Region: "global", Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := scoped.Jobs().Register(mockServiceJob("scoped", "z"), nil); err != nil {
		t.Fatalf("register with region and namespace: %v", err)
	}
	if j, _, err := scoped.Jobs().Info("scoped", nil); err != nil || *j.Namespace != "default" || *j.Region != "global" {
		t.Fatalf("info with region and namespace: %v %+v", err, j)
	}

	// Paginated lists: per_page and the next token.
	// The scheduler may still be writing evals (blocked or follow-up ones)
	// while the pages are read, so the pages must hold every eval listed
	// before paging and nothing that is not listed after it.
	before, _, err := c.Evaluations().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	page, pqm, err := c.Evaluations().List(&nomadapi.QueryOptions{PerPage: 1})
	if err != nil || len(page) != 1 || pqm.NextToken == "" {
		t.Fatalf("first page of evals: %v %d %+v", err, len(page), pqm)
	}
	seen := map[string]bool{page[0].ID: true}
	for token := pqm.NextToken; token != ""; {
		next, nqm, err := c.Evaluations().List(&nomadapi.QueryOptions{PerPage: 2, NextToken: token})
		if err != nil || len(next) == 0 || len(next) > 2 {
			t.Fatalf("page of evals at %q: %v %+v", token, err, next)
		}
		for _, e := range next {
			if seen[e.ID] {
				t.Fatalf("eval %s on two pages", e.ID)
			}
			seen[e.ID] = true
		}
		token = nqm.NextToken
	}
	after, _, err := c.Evaluations().List(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range before {
		if !seen[e.ID] {
			t.Fatalf("eval %s listed before paging is on no page (%d seen, %d listed)", e.ID, len(seen), len(before))
		}
	}
	listed := map[string]bool{}
	for _, e := range after {
		listed[e.ID] = true
	}
	for id := range seen {
		if !listed[id] {
			t.Fatalf("eval %s is on a page but not in the list", id)
		}
	}
	// A filter expression selects the jobs it matches: none of them is
	// dead, and all but "other" are not "other".
	if dead, _, err := c.Jobs().List(&nomadapi.QueryOptions{Filter: `Status == "dead"`}); err != nil || len(dead) != 0 {
		t.Fatalf("filter Status == \"dead\": %v %+v", err, dead)
	}
	if notOther, _, err := c.Jobs().List(&nomadapi.QueryOptions{Filter: `ID != "other"`}); err != nil ||
		len(notOther) != 2 || notOther[0].ID != "blocking" || notOther[1].ID != "scoped" {
		t.Fatalf("filter ID != \"other\": %v %+v", err, notOther)
	}

	// Errors: a missing job is a 404, an invalid job a 400 naming the field.
	_, _, err = jobs.Info("no-such-job", nil)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing job: %v", err)
	}
	for _, read := range []func() error{
		func() error { _, _, err := jobs.Summary("no-such-job", nil); return err },
		func() error { _, _, _, err := jobs.Versions("no-such-job", false, nil); return err },
		func() error {
			_, _, err := c.Allocations().Info("00000000-0000-0000-0000-000000000000", nil)
			return err
		},
		func() error {
			_, _, err := c.Evaluations().Info("00000000-0000-0000-0000-000000000000", nil)
			return err
		},
		func() error { _, _, err := c.Nodes().Info("00000000-0000-0000-0000-000000000000", nil); return err },
		func() error {
			_, _, err := c.Deployments().Info("00000000-0000-0000-0000-000000000000", nil)
			return err
		},
	} {
		if err := read(); err == nil || !strings.Contains(err.Error(), "404") {
			t.Fatalf("missing object: want a 404, got %v", err)
		}
	}
	bad := mockServiceJob("bad", "x")
	bad.TaskGroups[0].Count = ptr(-1)
	bad.TaskGroups[0].Tasks[0].Driver = ""
	_, _, err = jobs.Register(bad, nil)
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "count") || !strings.Contains(err.Error(), "driver") {
		t.Fatalf("invalid job: %v", err)
	}
	val, _, err := jobs.Validate(bad, nil)
	if err != nil || len(val.ValidationErrors) < 2 || !strings.Contains(val.Error, "driver") || !val.DriverConfigValidated {
		t.Fatalf("validate an invalid job: %v %+v", err, val)
	}
	if _, _, err := jobs.Plan(bad, true, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("plan an invalid job: %v", err)
	}
	bad = mockServiceJob("bad", "x")
	bad.Datacenters = nil
	if _, _, err := jobs.Register(bad, nil); err != nil {
		// Nomad's Canonicalize fills datacenters with "*"; an empty list is
		// only an error before that.
		t.Fatalf("register without datacenters: %v", err)
	}
}
