package agent

import (
	"strings"
	"testing"
	"time"

	nomadapi "github.com/hashicorp/nomad/api"

	"github.com/drover-sched/drover/command/agent/config"
)

// nomadClient returns Nomad's own API client pointed at a test agent.
func nomadClient(t *testing.T, a *TestAgent) *nomadapi.Client {
	t.Helper()
	c, err := nomadapi.NewClient(&nomadapi.Config{Address: a.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestNomadClientJobs drives the job endpoints with Nomad's client: every
// call succeeds and answers what Drover holds.
func TestNomadClientJobs(t *testing.T) {
	t.Parallel()
	a := NewTestAgent(t, nil)
	c := nomadClient(t, a)
	jobs := c.Jobs()

	job := richNomadJob("rich", "rich output\n")
	reg, wm, err := jobs.Register(job, nil)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	if reg.EvalID == "" || reg.EvalCreateIndex == 0 || reg.JobModifyIndex == 0 || wm.LastIndex == 0 || reg.Warnings != "" {
		t.Fatalf("register response: %+v %+v", reg, wm)
	}

	// Info: everything submitted comes back.
	got, qm, err := jobs.Info("rich", nil)
	if err != nil {
		t.Fatalf("info: %v", err)
	}
	if qm.LastIndex == 0 || !qm.KnownLeader {
		t.Fatalf("info query meta: %+v", qm)
	}
	checkRichJob(t, got)

	// List and PrefixList.
	other := nomadapi.NewBatchJob("other", "other", "global", 50).AddDatacenter("dc1")
	other.AddTaskGroup(nomadapi.NewTaskGroup("g", 1).AddTask(
		nomadapi.NewTask("t", "mock_driver").SetConfig("run_for", "10ms").Require(&nomadapi.Resources{CPU: ptr(50), MemoryMB: ptr(32)})))
	if _, _, err := jobs.Register(other, nil); err != nil {
		t.Fatalf("register other: %v", err)
	}
	stubs, _, err := jobs.List(nil)
	if err != nil || len(stubs) != 2 || stubs[0].ID != "other" || stubs[1].ID != "rich" {
		t.Fatalf("list: %v %+v", err, stubs)
	}
	if s := stubs[1]; s.Type != "service" || s.Priority != 55 || s.Name != "rich" || s.JobSummary == nil ||
		len(s.Datacenters) != 1 || s.Namespace != "default" || s.SubmitTime == 0 {
		t.Fatalf("list stub: %+v", s)
	}
	stubs, _, err = jobs.PrefixList("ri")
	if err != nil || len(stubs) != 1 || stubs[0].ID != "rich" {
		t.Fatalf("prefix list: %v %+v", err, stubs)
	}

	// Allocations, Summary once running.
	var allocs []*nomadapi.AllocationListStub
	waitUntil(t, "the rich job's alloc to run", func() bool {
		allocs, _, err = jobs.Allocations("rich", true, nil)
		if err != nil {
			t.Fatalf("allocations: %v", err)
		}
		return len(allocs) == 1 && allocs[0].ClientStatus == "running"
	})
	if s := allocs[0]; s.JobID != "rich" || s.TaskGroup != "web" || s.NodeID != a.NodeID() || s.JobVersion != 0 ||
		s.TaskStates["app"] == nil || s.TaskStates["app"].State != "running" || s.CreateTime == 0 || s.Namespace != "default" {
		t.Fatalf("alloc stub: %+v", s)
	}
	sum, _, err := jobs.Summary("rich", nil)
	if err != nil || sum.JobID != "rich" || sum.Namespace != "default" || sum.Summary["web"].Running != 1 || sum.CreateIndex == 0 {
		t.Fatalf("summary: %v %+v", err, sum)
	}

	// Evaluations.
	evals, _, err := jobs.Evaluations("rich", nil)
	if err != nil || len(evals) == 0 {
		t.Fatalf("evaluations: %v %+v", err, evals)
	}
	found := false
	for _, e := range evals {
		if e.ID == reg.EvalID {
			found = true
			if e.JobID != "rich" || e.TriggeredBy != "job-register" || e.Type != "service" || e.Status != "complete" {
				t.Fatalf("register eval: %+v", e)
			}
		}
	}
	if !found {
		t.Fatalf("register eval %s missing from %+v", reg.EvalID, evals)
	}

	// Deployments: a service job with an update block gets one.
	deps, _, err := jobs.Deployments("rich", false, nil)
	if err != nil {
		t.Fatalf("deployments: %v", err)
	}
	latest, _, err := jobs.LatestDeployment("rich", nil)
	if err != nil {
		t.Fatalf("latest deployment: %v", err)
	}
	// Drover's scheduler does not create deployments yet (Nomad would have
	// one here): no deployment reads as an empty list and a null latest.
	depList, _, err := c.Deployments().List(nil)
	if err != nil || len(depList) != len(deps) {
		t.Fatalf("deployment list: %v %+v", err, depList)
	}
	if latest == nil {
		if len(deps) != 0 {
			t.Fatalf("deployments %+v without a latest one", deps)
		}
	} else {
		if latest.JobID != "rich" || len(deps) == 0 || deps[0].ID != latest.ID || latest.TaskGroups["web"] == nil {
			t.Fatalf("deployments %+v, latest %+v", deps, latest)
		}
		dep, _, err := c.Deployments().Info(latest.ID, nil)
		if err != nil || dep.ID != latest.ID || dep.JobID != "rich" {
			t.Fatalf("deployment info: %v %+v", err, dep)
		}
	}

	// Plan with diff: a changed count is an edited job.
	changed := richNomadJob("rich", "rich output\n")
	changed.TaskGroups[0].Count = ptr(2)
	// Two allocs on the one node cannot share the static port.
	changed.TaskGroups[0].Networks[0].ReservedPorts = nil
	plan, _, err := jobs.Plan(changed, true, nil)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if plan.Diff == nil || plan.Diff.Type != "Edited" || plan.Diff.ID != "rich" || plan.Annotations == nil ||
		plan.Annotations.DesiredTGUpdates["web"] == nil || plan.Annotations.DesiredTGUpdates["web"].Place == 0 || plan.JobModifyIndex == 0 {
		t.Fatalf("plan: %+v diff %+v annotations %+v", plan, plan.Diff, plan.Annotations)
	}
	if len(plan.Diff.TaskGroups) != 1 || plan.Diff.TaskGroups[0].Name != "web" || plan.Diff.TaskGroups[0].Type != "Edited" {
		t.Fatalf("plan group diffs: %+v", plan.Diff.TaskGroups)
	}

	// RegisterOpts with EnforceIndex: a stale index is refused, the current
	// one accepted.
	_, _, err = jobs.RegisterOpts(changed, &nomadapi.RegisterOptions{EnforceIndex: true, ModifyIndex: 1}, nil)
	// Nomad's CLI tells this refusal from others by this prefix.
	if err == nil || !strings.Contains(err.Error(), "("+nomadapi.RegisterEnforceIndexErrPrefix+" 1: ") {
		t.Fatalf("register with a stale index: want an error with %q, got %v", nomadapi.RegisterEnforceIndexErrPrefix, err)
	}
	reg2, _, err := jobs.RegisterOpts(changed, &nomadapi.RegisterOptions{EnforceIndex: true, ModifyIndex: *got.JobModifyIndex}, nil)
	if err != nil || reg2.EvalID == "" {
		t.Fatalf("register with the current index: %v %+v", err, reg2)
	}

	// Versions, with and without diffs.
	versions, diffs, _, err := jobs.Versions("rich", false, nil)
	if err != nil || len(versions) != 2 || *versions[0].Version != 1 || *versions[1].Version != 0 || diffs != nil {
		t.Fatalf("versions: %v %d %+v", err, len(versions), diffs)
	}
	if *versions[0].TaskGroups[0].Count != 2 || *versions[1].TaskGroups[0].Count != 1 {
		t.Fatalf("version counts: %d %d", *versions[0].TaskGroups[0].Count, *versions[1].TaskGroups[0].Count)
	}
	versions, diffs, _, err = jobs.Versions("rich", true, nil)
	if err != nil || len(versions) != 2 || len(diffs) != 1 || diffs[0].Type != "Edited" {
		t.Fatalf("versions with diffs: %v %d %+v", err, len(versions), diffs)
	}
	waitUntil(t, "two allocs running", func() bool {
		sum, _, err = jobs.Summary("rich", nil)
		return err == nil && sum.Summary["web"].Running == 2
	})

	// Stable, then Revert to version 0.
	st, wm, err := jobs.Stable("rich", 1, true, nil)
	if err != nil || st == nil || wm.LastIndex == 0 {
		t.Fatalf("stable: %v %+v %+v", err, st, wm)
	}
	got, _, err = jobs.Info("rich", nil)
	if err != nil || !*got.Stable || *got.Version != 1 {
		t.Fatalf("stable job: %v %+v", err, got)
	}
	rev, _, err := jobs.Revert("rich", 0, ptr(uint64(1)), nil, "", "")
	if err != nil || rev.EvalID == "" {
		t.Fatalf("revert: %v %+v", err, rev)
	}
	got, _, err = jobs.Info("rich", nil)
	if err != nil || *got.Version != 2 || *got.TaskGroups[0].Count != 1 {
		t.Fatalf("reverted job: %v %+v", err, got)
	}
	if _, _, err := jobs.Revert("rich", 0, ptr(uint64(1)), nil, "", ""); err == nil {
		t.Fatal("revert with a wrong prior version: want an error")
	}

	// ForceEvaluate.
	evalID, _, err := jobs.ForceEvaluate("rich", nil)
	if err != nil || evalID == "" {
		t.Fatalf("force evaluate: %v %q", err, evalID)
	}

	// Deregister without purge keeps the job, stopped; with purge drops it.
	evalID, wm, err = jobs.Deregister("rich", false, nil)
	if err != nil || evalID == "" || wm.LastIndex == 0 {
		t.Fatalf("deregister: %v %q %+v", err, evalID, wm)
	}
	got, _, err = jobs.Info("rich", nil)
	if err != nil || !*got.Stop {
		t.Fatalf("stopped job: %v %+v", err, got)
	}
	if _, _, err := jobs.Deregister("rich", true, nil); err != nil {
		t.Fatalf("purge: %v", err)
	}
	if _, _, err := jobs.Info("rich", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("purged job: want a 404, got %v", err)
	}
	if _, _, err := jobs.DeregisterOpts("other", &nomadapi.DeregisterOptions{Purge: true, NoShutdownDelay: true}, nil); err != nil {
		t.Fatalf("deregister opts: %v", err)
	}
	stubs, _, err = jobs.List(nil)
	if err != nil || len(stubs) != 0 {
		t.Fatalf("list after purges: %v %+v", err, stubs)
	}
}

// checkRichJob checks that what Nomad's client decodes from Drover is the
// job richNomadJob built.
func checkRichJob(t *testing.T, got *nomadapi.Job) {
	t.Helper()
	fail := func(what string, v any) { t.Helper(); t.Fatalf("job info: %s: %+v", what, v) }
	if *got.ID != "rich" || *got.Type != "service" || *got.Priority != 55 || *got.Region != "global" ||
		*got.Namespace != "default" || *got.Status == "" || got.SubmitTime == nil || *got.SubmitTime == 0 ||
		*got.Version != 0 || *got.CreateIndex == 0 || *got.JobModifyIndex == 0 {
		fail("header", got)
	}
	if len(got.Constraints) != 1 || got.Constraints[0].LTarget != "${attr.kernel.name}" || got.Constraints[0].Operand != "is_set" {
		fail("constraints", got.Constraints)
	}
	if len(got.Affinities) != 1 || got.Affinities[0].RTarget != "dc1" || *got.Affinities[0].Weight != 50 {
		fail("affinities", got.Affinities)
	}
	if len(got.Spreads) != 1 || *got.Spreads[0].Weight != 50 || len(got.Spreads[0].SpreadTarget) != 1 || got.Spreads[0].SpreadTarget[0].Percent != 100 {
		fail("spreads", got.Spreads)
	}
	if got.Meta["owner"] != "compat" {
		fail("meta", got.Meta)
	}
	if u := got.Update; u == nil || *u.MaxParallel != 1 || *u.Stagger != 15*time.Second || *u.HealthCheck != "task_states" {
		fail("update", got.Update)
	}
	if len(got.TaskGroups) != 1 {
		fail("groups", got.TaskGroups)
	}
	tg := got.TaskGroups[0]
	if *tg.Name != "web" || *tg.Count != 1 || len(tg.Constraints) != 1 || len(tg.Affinities) != 1 || *tg.Affinities[0].Weight != -20 || tg.Meta["group_meta"] != "g" {
		fail("group", tg)
	}
	if len(tg.Networks) != 1 || len(tg.Networks[0].DynamicPorts) != 1 || tg.Networks[0].DynamicPorts[0].Label != "http" ||
		tg.Networks[0].DynamicPorts[0].To != 8080 || len(tg.Networks[0].ReservedPorts) != 1 || tg.Networks[0].ReservedPorts[0].Value != 23456 {
		fail("networks", tg.Networks)
	}
	if r := tg.RestartPolicy; r == nil || *r.Attempts != 2 || *r.Interval != 30*time.Minute || *r.Delay != 15*time.Second || *r.Mode != "fail" {
		fail("restart", tg.RestartPolicy)
	}
	if r := tg.ReschedulePolicy; r == nil || *r.DelayFunction != "exponential" || !*r.Unlimited || *r.MaxDelay != time.Hour {
		fail("reschedule", tg.ReschedulePolicy)
	}
	if m := tg.Migrate; m == nil || *m.HealthCheck != "checks" || *m.MinHealthyTime != 10*time.Second {
		fail("migrate", tg.Migrate)
	}
	if d := tg.Disconnect; d == nil || d.LostAfter == nil || *d.LostAfter != 5*time.Minute || *d.Reconcile != "best_score" {
		fail("disconnect", tg.Disconnect)
	}
	if e := tg.EphemeralDisk; e == nil || *e.SizeMB != 150 || !*e.Sticky {
		fail("ephemeral disk", tg.EphemeralDisk)
	}
	if len(tg.Services) != 1 || tg.Services[0].Name != "web" || tg.Services[0].PortLabel != "http" || tg.Services[0].Provider != "nomad" ||
		len(tg.Services[0].Checks) != 1 || tg.Services[0].Checks[0].Path != "/health" || tg.Services[0].Checks[0].Interval != 10*time.Second {
		fail("services", tg.Services)
	}
	if u := tg.Update; u == nil || *u.MaxParallel != 1 {
		fail("group update", tg.Update)
	}
	if len(tg.Tasks) != 1 {
		fail("tasks", tg.Tasks)
	}
	task := tg.Tasks[0]
	if task.Name != "app" || task.Driver != "mock_driver" || task.Config["run_for"] != "1h" || task.Env["GREETING"] != "hello" ||
		task.Meta["task_meta"] != "t" || *task.KillTimeout != 3*time.Second || len(task.Constraints) != 1 {
		fail("task", task)
	}
	if r := task.Resources; r == nil || *r.CPU != 100 || *r.MemoryMB != 64 {
		fail("resources", task.Resources)
	}
	if l := task.LogConfig; l == nil || *l.MaxFiles != 3 || *l.MaxFileSizeMB != 5 {
		fail("logs", task.LogConfig)
	}
}

// TestNomadClientJobReadBackIsTheJobSubmitted registers, with Nomad's
// client, a job using the blocks Drover keeps as data without acting on
// them (check details, check_restart, template options, volumes and
// volume mounts, dispatch payload, artifacts' headers), reads it back and
// plans the read-back job: nothing may be lost on the way, so `job
// inspect` output can be submitted again unchanged.
func TestNomadClientJobReadBackIsTheJobSubmitted(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := nomadClient(t, a)

	job := richNomadJob("kept", "x")
	tg := job.TaskGroups[0]
	// A host volume (CSI ones are refused at validation); access and
	// attachment modes are kept as data.
	tg.Volumes = map[string]*nomadapi.VolumeRequest{"data": {
		Name: "data", Type: "host", Source: "ebs-1", ReadOnly: true, AccessMode: "single-node-writer",
		AttachmentMode: "file-system", PerAlloc: true,
	}}
	svc := tg.Services[0]
	svc.CanaryTags, svc.AddressMode, svc.OnUpdate = []string{"canary"}, "host", "ignore_warnings"
	svc.CheckRestart = &nomadapi.CheckRestart{Limit: 3, Grace: ptr(30 * time.Second), IgnoreWarnings: true}
	chk := &svc.Checks[0]
	chk.Method, chk.Header, chk.Body, chk.InitialStatus = "POST", map[string][]string{"X-Probe": {"a", "b"}}, "{}", "warning"
	chk.SuccessBeforePassing, chk.FailuresBeforeCritical, chk.TLSSkipVerify = 2, 3, true
	task := tg.Tasks[0]
	task.VolumeMounts = []*nomadapi.VolumeMount{{Volume: ptr("data"), Destination: ptr("/srv/data"), ReadOnly: ptr(true)}}
	task.Templates = []*nomadapi.Template{{
		EmbeddedTmpl: ptr("key={{ key \"x\" }}"), DestPath: ptr("local/app.env"), Envvars: ptr(true),
		ChangeMode: ptr("script"), ChangeScript: &nomadapi.ChangeScript{Command: ptr("/bin/reload"), Args: []string{"-q"}, Timeout: ptr(5 * time.Second)},
		Splay: ptr(3 * time.Second), LeftDelim: ptr("[["), RightDelim: ptr("]]"), Uid: ptr(1000), Gid: ptr(1000),
		Wait: &nomadapi.WaitConfig{Min: ptr(2 * time.Second), Max: ptr(10 * time.Second)},
	}}
	task.Artifacts = []*nomadapi.TaskArtifact{{
		GetterSource: ptr("https://example.com/app.tgz"), GetterHeaders: map[string]string{"Auth": "t"},
		GetterOptions: map[string]string{"checksum": "sha256:" + strings.Repeat("0", 64)}, RelativeDest: ptr("local/app"), Chown: true,
	}}

	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	got, _, err := c.Jobs().Info("kept", nil)
	if err != nil {
		t.Fatalf("info: %v", err)
	}
	gtg := got.TaskGroups[0]
	if v := gtg.Volumes["data"]; v == nil || v.Type != "host" || v.Source != "ebs-1" || !v.PerAlloc || v.AccessMode != "single-node-writer" ||
		v.AttachmentMode != "file-system" || !v.ReadOnly {
		t.Fatalf("volume: %+v", v)
	}
	gs := gtg.Services[0]
	if len(gs.CanaryTags) != 1 || gs.AddressMode != "host" || gs.OnUpdate != "ignore_warnings" || gs.CheckRestart == nil ||
		gs.CheckRestart.Limit != 3 || *gs.CheckRestart.Grace != 30*time.Second {
		t.Fatalf("service: %+v", gs)
	}
	gc := gs.Checks[0]
	if gc.Method != "POST" || len(gc.Header["X-Probe"]) != 2 || gc.Body != "{}" || gc.InitialStatus != "warning" ||
		gc.SuccessBeforePassing != 2 || gc.FailuresBeforeCritical != 3 || !gc.TLSSkipVerify || gc.CheckRestart == nil || gc.CheckRestart.Limit != 3 {
		t.Fatalf("check: %+v", gc)
	}
	gt := gtg.Tasks[0]
	if len(gt.VolumeMounts) != 1 || *gt.VolumeMounts[0].Destination != "/srv/data" || !*gt.VolumeMounts[0].ReadOnly {
		t.Fatalf("volume mounts: %+v", gt.VolumeMounts)
	}
	if len(gt.Templates) != 1 {
		t.Fatalf("templates: %+v", gt.Templates)
	}
	tm := gt.Templates[0]
	if *tm.ChangeMode != "script" || tm.ChangeScript == nil || *tm.ChangeScript.Command != "/bin/reload" || *tm.Splay != 3*time.Second ||
		*tm.LeftDelim != "[[" || *tm.Uid != 1000 || tm.Wait == nil || *tm.Wait.Max != 10*time.Second || !*tm.Envvars {
		t.Fatalf("template: %+v", tm)
	}
	if len(gt.Artifacts) != 1 || gt.Artifacts[0].GetterHeaders["Auth"] != "t" || !gt.Artifacts[0].Chown {
		t.Fatalf("artifacts: %+v", gt.Artifacts)
	}

	// What Info returns plans as no change.
	plan, _, err := c.Jobs().Plan(got, true, nil)
	if err != nil || plan.Diff == nil || plan.Diff.Type != "None" {
		t.Fatalf("plan of the read-back job: %v %+v", err, plan)
	}
	if _, _, err := c.Jobs().Register(got, nil); err != nil {
		t.Fatalf("re-register: %v", err)
	}
	versions, _, _, err := c.Jobs().Versions("kept", false, nil)
	if err != nil || len(versions) != 1 {
		t.Fatalf("re-registering the read-back job made a new version: %v %d", err, len(versions))
	}
}

// TestNomadClientIgnoredFieldsAreWarnedAbout registers a job using Nomad
// features Drover does not have: the register succeeds, and its warnings
// (which Nomad's CLI prints) name each ignored field; plan and validate
// warn the same way.
func TestNomadClientIgnoredFieldsAreWarnedAbout(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := nomadClient(t, a)

	// A job canonicalized by Nomad's own api package carries Nomad's
	// defaults; none of them is worth a warning.
	canon := richNomadJob("canonical", "x")
	canon.Canonicalize()
	reg, _, err := c.Jobs().Register(canon, nil)
	if err != nil || reg.Warnings != "" {
		t.Fatalf("register of a Nomad-canonicalized job: %v %q", err, reg.Warnings)
	}

	job := richNomadJob("unsupported", "x")
	job.ConsulNamespace = ptr("")
	task := job.TaskGroups[0].Tasks[0]
	task.Vault = &nomadapi.Vault{Policies: []string{"app"}, Role: "app"}
	task.Identity = &nomadapi.WorkloadIdentity{Env: true}
	task.ScalingPolicies = []*nomadapi.ScalingPolicy{{Type: "vertical_cpu", Min: ptr(int64(100)), Max: ptr(int64(500))}}

	want := []string{"Job.TaskGroups[web].Tasks[app].ScalingPolicies", "Job.TaskGroups[web].Tasks[app].Identity", "Job.TaskGroups[web].Tasks[app].Vault"}
	check := func(what, warnings string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(warnings, w) {
				t.Fatalf("%s warnings %q do not name %s", what, warnings, w)
			}
		}
		if strings.Contains(warnings, "ConsulNamespace") {
			t.Fatalf("%s warnings name an empty field: %q", what, warnings)
		}
	}
	val, _, err := c.Jobs().Validate(job, nil)
	if err != nil || len(val.ValidationErrors) != 0 {
		t.Fatalf("validate: %v %+v", err, val)
	}
	check("validate", val.Warnings)
	reg, _, err = c.Jobs().Register(job, nil)
	if err != nil {
		t.Fatalf("register: %v", err)
	}
	check("register", reg.Warnings)
	plan, _, err := c.Jobs().Plan(job, true, nil)
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	check("plan", plan.Warnings)
}
