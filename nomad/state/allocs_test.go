package state

import (
	"errors"
	"testing"
	"time"

	"github.com/drover-sched/drover/structs"
)

func TestAllocLookupsByEachIndex(t *testing.T) {
	s := testStateStore(t)
	web := mustJob(t, s, 1, testJob("web"))
	web2 := mustJob(t, s, 2, testJob("web-2"))
	prod := testJob("web")
	prod.Namespace = "prod"
	prodJob := mustJob(t, s, 3, prod)
	mustNoErr(t, s.Write(4, func(tx *Txn) error {
		return tx.UpsertDeployment(&structs.Deployment{ID: "d1", Namespace: "default", JobID: "web"})
	}))

	a1 := testAlloc("aa-1", web, "n1")
	a1.DeploymentID = "d1"
	a2 := testAlloc("aa-2", web, "n1")
	a2.DesiredStatus = structs.AllocDesiredStatusStop
	a2.EvalID = "eval-aa-1" // an in-place update by a later eval
	a3 := testAlloc("bb-3", web2, "n10")
	a4 := testAlloc("aa-4", prodJob, "n1")
	a4.EvalID = "eval-aa-1" // same ID, other namespace's job: not the eval's
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpsertEvals([]*structs.Evaluation{testEval("eval-aa-1", web)}) }))
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a1, a2, a3, a4}) }))

	cases := []struct {
		name string
		got  func() ([]*structs.Allocation, error)
		want string
	}{
		{"by node returns terminal and live allocs, not a node sharing the prefix", func() ([]*structs.Allocation, error) { return s.AllocsByNode(nil, "n1") }, "[aa-1 aa-2 aa-4]"},
		{"by node, live only", func() ([]*structs.Allocation, error) { return s.AllocsByNodeTerminal(nil, "n1", false) }, "[aa-1 aa-4]"},
		{"by node, terminal only", func() ([]*structs.Allocation, error) { return s.AllocsByNodeTerminal(nil, "n1", true) }, "[aa-2]"},
		{"by job is exact and namespaced", func() ([]*structs.Allocation, error) { return s.AllocsByJob(nil, "default", "web", true) }, "[aa-1 aa-2]"},
		{"by eval", func() ([]*structs.Allocation, error) { return s.AllocsByEval(nil, "eval-aa-1") }, "[aa-1 aa-2]"},
		{"by an eval not stored", func() ([]*structs.Allocation, error) { return s.AllocsByEval(nil, "eval-bb-3") }, "[]"},
		{"by deployment", func() ([]*structs.Allocation, error) { return s.AllocsByDeployment(nil, "d1") }, "[aa-1]"},
		{"by a deployment not stored", func() ([]*structs.Allocation, error) { return s.AllocsByDeployment(nil, "d2") }, "[]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.got()
			mustNoErr(t, err)
			if fmtSet(allocIDs(got)) != tc.want {
				t.Fatalf("got %v, want %s", allocIDs(got), tc.want)
			}
		})
	}
	prefix := func(ns, p string) string {
		it, err := s.AllocsByIDPrefix(nil, ns, p)
		mustNoErr(t, err)
		var out []string
		for raw := it.Next(); raw != nil; raw = it.Next() {
			out = append(out, raw.(*structs.Allocation).ID)
		}
		return fmtSet(out)
	}
	if got := prefix("default", "aa"); got != "[aa-1 aa-2]" {
		t.Fatalf("prefix aa in default = %s", got)
	}
	if got := prefix("*", "aa"); got != "[aa-1 aa-2 aa-4]" {
		t.Fatalf("prefix aa in all namespaces = %s", got)
	}
	got, _ := s.AllocByID(nil, "aa-1")
	if got.CreateIndex != 5 || got.ModifyIndex != 5 || got.AllocModifyIndex != 5 {
		t.Fatalf("indexes = %d/%d/%d", got.CreateIndex, got.ModifyIndex, got.AllocModifyIndex)
	}
}

func TestAllocsByJobIgnoresAPurgedJobsAllocsUnlessAsked(t *testing.T) {
	s := testStateStore(t)
	old := mustJob(t, s, 1, testJob("web"))
	stopped := testAlloc("old", old, "n1")
	stopped.DesiredStatus = structs.AllocDesiredStatusStop
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{stopped}) }))
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.DeleteJob("default", "web") }))
	cur := mustJob(t, s, 4, testJob("web"))
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{testAlloc("new", cur, "n1")}) }))

	got, _ := s.AllocsByJob(nil, "default", "web", false)
	if fmtSet(allocIDs(got)) != "[new]" {
		t.Fatalf("current incarnation = %v", allocIDs(got))
	}
	got, _ = s.AllocsByJob(nil, "default", "web", true)
	if fmtSet(allocIDs(got)) != "[new old]" {
		t.Fatalf("any incarnation = %v", allocIDs(got))
	}
}

func TestUpsertAllocsKeepsClientOwnedFields(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	a := testAlloc("a1", job, "n1")
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
	report := a.Copy()
	report.ClientStatus = structs.AllocClientStatusRunning
	report.ClientDescription = "tasks are running"
	report.TaskStates = map[string]*structs.TaskState{"t": {State: structs.TaskStateRunning}}
	report.NetworkStatus = &structs.AllocNetworkStatus{Address: "10.0.0.1"}
	report.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(true)}
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{report}) }))

	// The scheduler's copy is from before the report (pending, no task
	// states) and it changes a server field.
	stale := a.Copy()
	stale.DesiredDescription = "in-place update"
	stale.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	stale.Job = nil
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{stale}) }))

	got, _ := s.AllocByID(nil, "a1")
	if got.ClientStatus != structs.AllocClientStatusRunning || got.ClientDescription != "tasks are running" {
		t.Fatalf("client status overwritten: %q %q", got.ClientStatus, got.ClientDescription)
	}
	if got.TaskStates["t"] == nil || got.NetworkStatus == nil || got.NetworkStatus.Address != "10.0.0.1" {
		t.Fatalf("task states or network overwritten: %+v %+v", got.TaskStates, got.NetworkStatus)
	}
	if got.DeploymentStatus == nil || got.DeploymentStatus.Healthy == nil || !*got.DeploymentStatus.Healthy || !got.DeploymentStatus.Canary {
		t.Fatalf("deployment status = %+v, want health kept and canary taken", got.DeploymentStatus)
	}
	if got.DesiredDescription != "in-place update" || got.Job == nil {
		t.Fatalf("server fields not applied: %q job %v", got.DesiredDescription, got.Job)
	}
	if got.CreateIndex != 2 || got.ModifyIndex != 4 || got.AllocModifyIndex != 4 {
		t.Fatalf("indexes = %d/%d/%d, want 2/4/4", got.CreateIndex, got.ModifyIndex, got.AllocModifyIndex)
	}
}

func TestUpsertAllocsServerMarks(t *testing.T) {
	cases := []struct {
		name       string
		existing   string
		proposed   string
		wantStatus string
	}{
		{"marking a running alloc unknown is the server's right", structs.AllocClientStatusRunning, structs.AllocClientStatusUnknown, structs.AllocClientStatusUnknown},
		{"marking an unknown alloc lost is the server's right", structs.AllocClientStatusUnknown, structs.AllocClientStatusLost, structs.AllocClientStatusLost},
		{"a stale lost mark on a completed alloc is dropped", structs.AllocClientStatusComplete, structs.AllocClientStatusLost, structs.AllocClientStatusComplete},
		{"a stale running from the server is ignored", structs.AllocClientStatusFailed, structs.AllocClientStatusRunning, structs.AllocClientStatusFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStateStore(t)
			job := mustJob(t, s, 1, testJob("web"))
			a := testAlloc("a1", job, "n1")
			a.ClientStatus = tc.existing
			mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
			p := a.Copy()
			p.ClientStatus = tc.proposed
			mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{p}) }))
			got, _ := s.AllocByID(nil, "a1")
			if got.ClientStatus != tc.wantStatus {
				t.Fatalf("status = %q, want %q", got.ClientStatus, tc.wantStatus)
			}
		})
	}
}

func TestUpsertAllocsRefusesMovingDesiredBackToRun(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	a := testAlloc("a1", job, "n1")
	a.DesiredStatus = structs.AllocDesiredStatusStop
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))

	fresh := testAlloc("a2", job, "n1")
	back := a.Copy()
	back.DesiredStatus = structs.AllocDesiredStatusRun
	err := s.Write(3, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{fresh, back}) })
	if !errors.Is(err, structs.ErrInvalidTransition) {
		t.Fatalf("err = %v, want ErrInvalidTransition", err)
	}
	if got, _ := s.AllocByID(nil, "a2"); got != nil {
		t.Fatal("the valid alloc of the refused batch was applied")
	}
	if got, _ := s.AllocByID(nil, "a1"); got.DesiredStatus != structs.AllocDesiredStatusStop {
		t.Fatalf("desired status = %q", got.DesiredStatus)
	}
	if idx, _ := s.Index(TableAllocs); idx != 2 {
		t.Fatalf("allocs index = %d, want 2", idx)
	}
}

func TestUpsertAllocsFillsTheJob(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	a := testAlloc("a1", job, "n1")
	a.Job = nil
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
	if got, _ := s.AllocByID(nil, "a1"); got.Job == nil || got.Job.CreateIndex != 1 {
		t.Fatalf("job not attached: %+v", got.Job)
	}
	orphan := testAlloc("a2", testJob("nope"), "n1")
	orphan.Job = nil
	if err := s.Write(3, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{orphan}) }); !errors.Is(err, structs.ErrNotFound) {
		t.Fatalf("alloc of an unknown job: %v", err)
	}
}

func TestUpdateAllocsFromClient(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	a1, a2 := testAlloc("a1", job, "n1"), testAlloc("a2", job, "n1")
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a1, a2}) }))

	running := a1.Copy()
	running.ClientStatus = structs.AllocClientStatusRunning
	running.DesiredStatus = structs.AllocDesiredStatusStop // a client cannot change this
	running.ModifyTime = 777
	gone := testAlloc("gc-ed", job, "n1")
	gone.ClientStatus = structs.AllocClientStatusRunning
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{running, gone}) }))

	got, _ := s.AllocByID(nil, "a1")
	if got.ClientStatus != structs.AllocClientStatusRunning || got.DesiredStatus != structs.AllocDesiredStatusRun {
		t.Fatalf("client %q desired %q", got.ClientStatus, got.DesiredStatus)
	}
	if got.AllocModifyIndex != 2 || got.ModifyIndex != 3 || got.ModifyTime != 777 {
		t.Fatalf("AllocModifyIndex %d ModifyIndex %d ModifyTime %d, want 2/3/777", got.AllocModifyIndex, got.ModifyIndex, got.ModifyTime)
	}
	if g, _ := s.AllocByID(nil, "gc-ed"); g != nil {
		t.Fatal("a report for an unknown alloc created it")
	}

	done := a1.Copy()
	done.ClientStatus = structs.AllocClientStatusComplete
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{done}) }))

	a2Running := a2.Copy()
	a2Running.ClientStatus = structs.AllocClientStatusRunning
	resurrect := a1.Copy()
	resurrect.ClientStatus = structs.AllocClientStatusRunning
	err := s.Write(5, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{a2Running, resurrect}) })
	if !errors.Is(err, structs.ErrInvalidTransition) {
		t.Fatalf("terminal -> running: err = %v", err)
	}
	if g, _ := s.AllocByID(nil, "a2"); g.ClientStatus != structs.AllocClientStatusPending {
		t.Fatalf("part of a refused batch was applied: a2 is %q", g.ClientStatus)
	}
	if g, _ := s.AllocByID(nil, "a1"); g.ClientStatus != structs.AllocClientStatusComplete {
		t.Fatalf("a1 = %q", g.ClientStatus)
	}

	lost := a2.Copy()
	lost.ClientStatus = structs.AllocClientStatusLost
	if err := s.Write(6, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{lost}) }); !errors.Is(err, structs.ErrInvalidTransition) {
		t.Fatalf("a client marking lost: err = %v", err)
	}
}

func TestClientHealthReportsCountInTheDeployment(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	d := &structs.Deployment{ID: "d1", Namespace: "default", JobID: "web", JobCreateIndex: 1,
		Status:     structs.DeploymentStatusRunning,
		TaskGroups: map[string]*structs.DeploymentState{"web": {DesiredTotal: 2, ProgressDeadline: time.Minute}}}
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertDeployment(d) }))
	a := testAlloc("a1", job, "n1")
	a.DeploymentID = "d1"
	a.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	mustNoErr(t, s.Write(3, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{a}) }))
	got, _ := s.DeploymentByID(nil, "d1")
	if st := got.TaskGroups["web"]; st.PlacedAllocs != 1 || len(st.PlacedCanaries) != 1 {
		t.Fatalf("after placement: %+v", st)
	}

	at := time.Unix(1000, 0)
	report := a.Copy()
	report.ClientStatus = structs.AllocClientStatusRunning
	report.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: structs.BoolPtr(true), Timestamp: at, Canary: true}
	mustNoErr(t, s.Write(4, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{report}) }))
	got, _ = s.DeploymentByID(nil, "d1")
	st := got.TaskGroups["web"]
	if st.HealthyAllocs != 1 || st.UnhealthyAllocs != 0 || !st.RequireProgressBy.Equal(at.Add(time.Minute)) || got.ModifyIndex != 4 {
		t.Fatalf("after healthy report: %+v (modify %d)", st, got.ModifyIndex)
	}
	alloc, _ := s.AllocByID(nil, "a1")
	if alloc.DeploymentStatus.ModifyIndex != 4 {
		t.Fatalf("alloc deployment status ModifyIndex = %d", alloc.DeploymentStatus.ModifyIndex)
	}

	report.DeploymentStatus.Healthy = structs.BoolPtr(false)
	mustNoErr(t, s.Write(5, func(tx *Txn) error { return tx.UpdateAllocsFromClient([]*structs.Allocation{report}) }))
	got, _ = s.DeploymentByID(nil, "d1")
	if st := got.TaskGroups["web"]; st.HealthyAllocs != 0 || st.UnhealthyAllocs != 1 || st.PlacedAllocs != 1 {
		t.Fatalf("after unhealthy report: %+v", st)
	}
}

func TestUpdateAllocsDesiredTransitions(t *testing.T) {
	s := testStateStore(t)
	job := mustJob(t, s, 1, testJob("web"))
	mustNoErr(t, s.Write(2, func(tx *Txn) error { return tx.UpsertAllocs([]*structs.Allocation{testAlloc("a1", job, "n1")}) }))
	e := testEval("e1", job)
	e.TriggeredBy = structs.EvalTriggerNodeDrain
	err := s.Write(3, func(tx *Txn) error {
		return tx.UpdateAllocsDesiredTransitions(map[string]*structs.DesiredTransition{
			"a1":      {Migrate: structs.BoolPtr(true)},
			"missing": {Migrate: structs.BoolPtr(true)},
		}, []*structs.Evaluation{e}, nil)
	})

	mustNoErr(t, err)
	got, _ := s.AllocByID(nil, "a1")
	if !got.DesiredTransition.ShouldMigrate() || got.AllocModifyIndex != 3 || got.ModifyIndex != 3 {
		t.Fatalf("alloc = migrate %v alloc-modify %d", got.DesiredTransition.ShouldMigrate(), got.AllocModifyIndex)
	}
	if ev, _ := s.EvalByID(nil, "e1"); ev == nil || ev.CreateIndex != 3 {
		t.Fatalf("eval = %+v", ev)
	}
}
