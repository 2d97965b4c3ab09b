package allocrunner

import (
	"testing"
	"time"

	"github.com/drover-sched/drover/client/internal/testutil"
	"github.com/drover-sched/drover/client/state"
	"github.com/drover-sched/drover/structs"
)

func TestHealthPolicyFor(t *testing.T) {
	update := &structs.UpdateStrategy{HealthCheck: structs.UpdateHealthCheckTaskStates, MinHealthyTime: time.Second, HealthyDeadline: time.Minute}
	migrate := &structs.MigrateStrategy{HealthCheck: structs.UpdateHealthCheckChecks, MinHealthyTime: 2 * time.Second, HealthyDeadline: 2 * time.Minute}
	service := &structs.Job{Type: structs.JobTypeService}
	batch := &structs.Job{Type: structs.JobTypeBatch}
	cases := []struct {
		name   string
		alloc  *structs.Allocation
		tg     *structs.TaskGroup
		want   healthPolicy
		judged bool
	}{
		{"a deployment's alloc is judged by the update block",
			&structs.Allocation{Job: service, DeploymentID: "d1"}, &structs.TaskGroup{Update: update, Migrate: migrate},
			healthPolicy{structs.UpdateHealthCheckTaskStates, time.Second, time.Minute}, true},
		{"a service alloc without a deployment is judged by the migrate block",
			&structs.Allocation{Job: service}, &structs.TaskGroup{Update: update, Migrate: migrate},
			healthPolicy{structs.UpdateHealthCheckChecks, 2 * time.Second, 2 * time.Minute}, true},
		{"a batch alloc without a deployment is not judged",
			&structs.Allocation{Job: batch}, &structs.TaskGroup{Migrate: migrate}, healthPolicy{}, false},
		{"a deployment's alloc in a group without an update block is not judged",
			&structs.Allocation{Job: service, DeploymentID: "d1"}, &structs.TaskGroup{Migrate: migrate}, healthPolicy{}, false},
		{"a service alloc in a group without a migrate block is not judged",
			&structs.Allocation{Job: service}, &structs.TaskGroup{Update: update}, healthPolicy{}, false},
		{"manual health is left to the operator",
			&structs.Allocation{Job: service, DeploymentID: "d1"}, &structs.TaskGroup{Update: &structs.UpdateStrategy{HealthCheck: structs.UpdateHealthCheckManual}},
			healthPolicy{}, false},
		{"an empty health_check means checks",
			&structs.Allocation{Job: service}, &structs.TaskGroup{Migrate: &structs.MigrateStrategy{MinHealthyTime: time.Second}},
			healthPolicy{structs.UpdateHealthCheckChecks, time.Second, 0}, true},
		{"no group, no verdict", &structs.Allocation{Job: service}, nil, healthPolicy{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, judged := healthPolicyFor(c.alloc, c.tg)
			if judged != c.judged || (judged && got != c.want) {
				t.Fatalf("got %+v, %v; want %+v, %v", got, judged, c.want, c.judged)
			}
		})
	}
}

// migrationAlloc is a service alloc outside any deployment, as the
// scheduler places a replacement for an alloc on a draining node.
func migrationAlloc(task *structs.Task, m *structs.MigrateStrategy) *structs.Allocation {
	a := mockAlloc(structs.JobTypeService, task)
	a.Job.TaskGroups[0].Migrate = m
	return a
}

// A migrated service alloc reports its health by its group's migrate
// block, so the drainer can tell when the next alloc may move.
func TestMigrationHealthReportedAfterMinHealthyTime(t *testing.T) {
	alloc := migrationAlloc(&structs.Task{Name: "web", Config: map[string]any{}},
		&structs.MigrateStrategy{MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute})
	ar, rec, clk := startOnMock(t, alloc, state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	runningAt := clk.Now()
	clk.Advance(9 * time.Second)
	if rec.last().DeploymentStatus != nil {
		t.Fatal("healthy before min_healthy_time")
	}
	testutil.WaitForWhile(t, "health", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	ds := rec.last().DeploymentStatus
	if ds.Healthy == nil || !*ds.Healthy || ds.Timestamp.Sub(runningAt) < 10*time.Second || ds.Canary {
		t.Fatalf("deployment status %+v, running at %v", ds, runningAt)
	}
}

// A main task that never runs (its prestart task never finishes) makes the
// alloc unhealthy at healthy_deadline.
func TestMigrationUnhealthyAtHealthyDeadline(t *testing.T) {
	alloc := migrationAlloc(&structs.Task{Name: "web", Config: map[string]any{}},
		&structs.MigrateStrategy{HealthCheck: structs.UpdateHealthCheckTaskStates, MinHealthyTime: time.Second, HealthyDeadline: 30 * time.Second})
	setup := &structs.Task{Name: "setup", Driver: "mock", Config: map[string]any{}, Lifecycle: &structs.TaskLifecycleConfig{Hook: "prestart"},
		RestartPolicy: &structs.RestartPolicy{Mode: structs.RestartPolicyModeFail, Interval: time.Hour}}
	alloc.Job.TaskGroups[0].Tasks = append([]*structs.Task{setup}, alloc.Job.TaskGroups[0].Tasks...)
	ar, rec, clk := startOnMock(t, alloc, state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	start := clk.Now()
	testutil.WaitForWhile(t, "health verdict", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	ds := rec.last().DeploymentStatus
	if *ds.Healthy || ds.Timestamp.Sub(start) < 30*time.Second {
		t.Fatalf("verdict %+v at %v, started %v: want unhealthy at the deadline", ds, ds.Timestamp, start)
	}
}

// With manual health the client reports nothing, however long the tasks
// run.
func TestManualHealthReportsNothing(t *testing.T) {
	alloc := deploymentAlloc(&structs.Task{Name: "web", Config: map[string]any{}})
	alloc.Job.TaskGroups[0].Update.HealthCheck = structs.UpdateHealthCheckManual
	alloc.Job.TaskGroups[0].Migrate = &structs.MigrateStrategy{HealthCheck: structs.UpdateHealthCheckTaskStates, MinHealthyTime: time.Second}
	ar, rec, clk := startOnMock(t, alloc, state.NewMemDB())
	testutil.WaitFor(t, "running", func() bool { return rec.last().ClientStatus == structs.AllocClientStatusRunning })
	for i := 0; i < 20; i++ {
		clk.Advance(time.Minute)
	}
	ar.Kill("done")
	testutil.WaitForWhile(t, "stopped", ar.IsTerminal, func() { clk.Advance(time.Second) })
	<-ar.Done()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, u := range rec.updates {
		if u.DeploymentStatus != nil {
			t.Fatalf("manual health reported %+v", u.DeploymentStatus)
		}
	}
}

// The verdict keeps the Canary flag the scheduler set.
func TestHealthVerdictKeepsCanary(t *testing.T) {
	alloc := deploymentAlloc(&structs.Task{Name: "web", Config: map[string]any{}})
	alloc.DeploymentStatus = &structs.AllocDeploymentStatus{Canary: true}
	ar, rec, clk := startOnMock(t, alloc, state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitForWhile(t, "health", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	if ds := rec.last().DeploymentStatus; !*ds.Healthy || !ds.Canary {
		t.Fatalf("deployment status %+v, want healthy canary", ds)
	}
}

// A migration's verdict is not carried into a deployment the alloc joins
// later: the alloc reports no health until it has a verdict for the
// deployment.
func TestMigrationVerdictNotReportedForALaterDeployment(t *testing.T) {
	alloc := migrationAlloc(&structs.Task{Name: "web", Config: map[string]any{}},
		&structs.MigrateStrategy{HealthCheck: structs.UpdateHealthCheckTaskStates, MinHealthyTime: time.Second, HealthyDeadline: time.Minute})
	alloc.Job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, HealthCheck: structs.UpdateHealthCheckTaskStates,
		MinHealthyTime: 10 * time.Second, HealthyDeadline: 5 * time.Minute}
	ar, rec, clk := startOnMock(t, alloc, state.NewMemDB())
	defer func() { ar.Kill("done"); <-ar.Done() }()
	testutil.WaitForWhile(t, "migration health", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })

	moved := alloc.Copy()
	moved.DeploymentID = "d1"
	moved.ClientStatus = structs.AllocClientStatusRunning
	moved.DeploymentStatus = rec.last().DeploymentStatus // the servers keep the migration's verdict
	moved.AllocModifyIndex = 20
	ar.Update(moved)
	testutil.WaitFor(t, "a report based on the new version", func() bool { return rec.last().AllocModifyIndex == 20 })
	if ds := rec.last().DeploymentStatus; ds != nil {
		t.Fatalf("the migration's verdict %+v was reported for the deployment", ds)
	}
	movedAt := clk.Now()
	testutil.WaitForWhile(t, "deployment health", func() bool { return rec.last().DeploymentStatus != nil }, func() { clk.Advance(time.Second) })
	if ds := rec.last().DeploymentStatus; !*ds.Healthy || ds.Timestamp.Sub(movedAt) < 10*time.Second {
		t.Fatalf("deployment verdict %+v, moved at %v", ds, movedAt)
	}
}
