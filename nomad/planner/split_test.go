package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/drover-sched/drover/helper/rpcx"
	"github.com/drover-sched/drover/nomad/planner"
	"github.com/drover-sched/drover/structs"
)

func TestSplitPlanCutsByAllocationAndKeepsEveryOne(t *testing.T) {
	job := &structs.Job{ID: "j", Type: structs.JobTypeService, TaskGroups: []*structs.TaskGroup{{
		Name: "web", Count: 1,
		Tasks: []*structs.Task{{Name: "t", Driver: "mock", Config: map[string]any{"run_for": "1h"},
			Resources: &structs.Resources{CPU: 100, MemoryMB: 128}}},
	}}}
	job.Meta = map[string]string{"blob": strings.Repeat("x", 4<<10)}
	plan := &structs.Plan{EvalID: "e", Job: job, NodeUpdate: map[string][]*structs.Allocation{}, NodeAllocation: map[string][]*structs.Allocation{},
		Deployment: &structs.Deployment{ID: "d"}, Annotations: &structs.PlanAnnotations{}}
	for i := 0; i < 300; i++ {
		node := fmt.Sprintf("node-%02d", i%7)
		a := &structs.Allocation{ID: fmt.Sprintf("a-%03d", i), NodeID: node, Job: job, TaskGroup: "web", Name: strings.Repeat("n", 200)}
		if i%3 == 0 {
			plan.NodeUpdate[node] = append(plan.NodeUpdate[node], a)
		} else {
			plan.NodeAllocation[node] = append(plan.NodeAllocation[node], a)
		}
	}
	normal := plan.Normalized()
	whole, _ := rpcx.Encode(plan)
	small, _ := rpcx.Encode(normal)
	if len(small)*5 > len(whole) {
		t.Fatalf("a normalized plan is %d bytes against %d: the job should travel once", len(small), len(whole))
	}
	const budget = 16 << 10
	parts, err := planner.Split(normal, budget)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 2 {
		t.Fatalf("a %d-byte plan should be cut for a %d-byte budget, got %d part", len(small), budget, len(parts))
	}
	seen := map[string]int{}
	for i, p := range parts {
		buf, _ := rpcx.Encode(p)
		if len(buf) > budget {
			t.Errorf("part %d is %d bytes, over the budget", i, len(buf))
		}
		if (p.Deployment != nil) != (i == 0) || (p.Annotations != nil) != (i == 0) {
			t.Errorf("part %d: deployment and annotations belong to the first part only", i)
		}
		if p.EvalID != "e" || p.Job != job {
			t.Errorf("part %d is not for the same eval and job", i)
		}
		for _, m := range []map[string][]*structs.Allocation{p.NodeUpdate, p.NodeAllocation} {
			for node, allocs := range m {
				for _, a := range allocs {
					if a.NodeID != node {
						t.Errorf("alloc %s filed under node %s", a.ID, node)
					}
					seen[a.ID]++
				}
			}
		}
	}
	if len(seen) != 300 {
		t.Fatalf("parts hold %d allocs, want all 300", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("alloc %s is in %d parts", id, n)
		}
	}

	plan.AllAtOnce = true
	if _, err := planner.Split(plan.Normalized(), budget); err == nil || !strings.Contains(err.Error(), "all_at_once") {
		t.Fatalf("an all_at_once plan too large to send whole must be refused naming all_at_once, got %v", err)
	}
}
