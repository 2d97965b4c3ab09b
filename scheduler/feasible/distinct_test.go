package feasible

import (
	"testing"

	"github.com/drover-sched/drover/structs"
)

// twoGroupJob is simpleJob with a second group "api" identical to "web".
func twoGroupJob(count int) *structs.Job {
	job := simpleJob(count)
	api := job.TaskGroups[0].Copy()
	api.Name = "api"
	job.TaskGroups = append(job.TaskGroups, api)
	return job
}

func TestDistinctHosts(t *testing.T) {
	distinct := []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts}}
	cases := []struct {
		name string
		// setup returns the job and the allocations in the state (on
		// node 0 of 3) and may change the plan.
		setup      func(job *structs.Job, nodes []*structs.Node, plan *structs.Plan) []*structs.Allocation
		group      int
		wantPlaced int
	}{
		{
			name: "group level: one allocation per node, a fourth does not fit",
			setup: func(job *structs.Job, _ []*structs.Node, _ *structs.Plan) []*structs.Allocation {
				job.TaskGroups[0].Constraints = distinct
				return nil
			},
			wantPlaced: 3,
		},
		{
			name: "group level: an existing allocation of the group blocks its node",
			setup: func(job *structs.Job, nodes []*structs.Node, _ *structs.Plan) []*structs.Allocation {
				job.TaskGroups[0].Constraints = distinct
				return []*structs.Allocation{MockAllocFor(job, job.TaskGroups[0], nodes[0], 0)}
			},
			wantPlaced: 2,
		},
		{
			name: "group level: an allocation the plan stops no longer blocks its node",
			setup: func(job *structs.Job, nodes []*structs.Node, plan *structs.Plan) []*structs.Allocation {
				job.TaskGroups[0].Constraints = distinct
				a := MockAllocFor(job, job.TaskGroups[0], nodes[0], 0)
				a.ClientStatus = structs.AllocClientStatusRunning
				plan.AppendStoppedAlloc(a, "replaced", "", "")
				return []*structs.Allocation{a}
			},
			wantPlaced: 3,
		},
		{
			name: "group level: another group's allocation does not block",
			setup: func(job *structs.Job, nodes []*structs.Node, _ *structs.Plan) []*structs.Allocation {
				job.TaskGroups[0].Constraints = distinct
				return []*structs.Allocation{MockAllocFor(job, job.TaskGroups[1], nodes[0], 0)}
			},
			wantPlaced: 3,
		},
		{
			name: "job level: another group's allocation blocks its node",
			setup: func(job *structs.Job, nodes []*structs.Node, _ *structs.Plan) []*structs.Allocation {
				job.Constraints = distinct
				return []*structs.Allocation{MockAllocFor(job, job.TaskGroups[1], nodes[0], 0)}
			},
			wantPlaced: 2,
		},
		{
			name: "task level acts like group level",
			setup: func(job *structs.Job, nodes []*structs.Node, _ *structs.Plan) []*structs.Allocation {
				job.TaskGroups[0].Tasks[0].Constraints = distinct
				return []*structs.Allocation{MockAllocFor(job, job.TaskGroups[0], nodes[1], 0)}
			},
			wantPlaced: 2,
		},
		{
			// The jobspec parser writes distinct_hosts = true with its value,
			// as Nomad's does.
			name: "group level with the value true, as the jobspec parser writes it",
			setup: func(job *structs.Job, nodes []*structs.Node, _ *structs.Plan) []*structs.Allocation {
				job.TaskGroups[0].Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts, RTarget: "true"}}
				return []*structs.Allocation{MockAllocFor(job, job.TaskGroups[0], nodes[0], 0)}
			},
			wantPlaced: 2,
		},
		{
			name: "distinct_hosts = false does nothing",
			setup: func(job *structs.Job, _ []*structs.Node, _ *structs.Plan) []*structs.Allocation {
				job.TaskGroups[0].Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts, RTarget: "false"}}
				return nil
			},
			wantPlaced: 5,
		},
		{
			name: "another job's allocation does not block",
			setup: func(job *structs.Job, nodes []*structs.Node, _ *structs.Plan) []*structs.Allocation {
				job.TaskGroups[0].Constraints = distinct
				other := simpleJob(1)
				return []*structs.Allocation{MockAllocFor(other, other.TaskGroups[0], nodes[0], 0)}
			},
			wantPlaced: 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := mockNodes(3, nil)
			job := twoGroupJob(5)
			f := newFixture(1, nodes)
			f.state.addAllocs(tc.setup(job, nodes, f.plan)...)
			s := f.stack(job)
			tg := job.TaskGroups[tc.group]
			placed := 0
			for i := 0; i < 5; i++ {
				if f.place(t, s, job, tg, i, nil) != nil {
					placed++
				}
			}
			if placed != tc.wantPlaced {
				t.Fatalf("placed %d, want %d", placed, tc.wantPlaced)
			}
			if placed < 5 {
				if got := f.ctx.Metrics().ConstraintFiltered["distinct_hosts"]; got != 3 {
					t.Fatalf("the last failure should name distinct_hosts on all 3 nodes, got %v", f.ctx.Metrics().ConstraintFiltered)
				}
			}
			perNode := map[string]int{}
			for _, allocs := range f.plan.NodeAllocation {
				for _, a := range allocs {
					perNode[a.NodeID]++
				}
			}
			for node, n := range perNode {
				if n > 1 && tc.wantPlaced < 5 {
					t.Fatalf("node %s got %d allocations", node, n)
				}
			}
		})
	}
}

func TestDistinctProperty(t *testing.T) {
	// Four nodes on two racks.
	newNodes := func() []*structs.Node {
		return mockNodes(4, func(i int, n *structs.Node) {
			n.Meta["rack"] = []string{"r1", "r2"}[i%2]
		})
	}
	rackOf := func(nodes []*structs.Node, id string) string {
		for _, n := range nodes {
			if n.ID == id {
				return n.Meta["rack"]
			}
		}
		return ""
	}
	cases := []struct {
		name       string
		setup      func(job *structs.Job, nodes []*structs.Node) []*structs.Allocation
		wantPlaced int
		wantPerKey map[string]int // placements per rack in the plan
	}{
		{
			name: "default limit one per rack",
			setup: func(job *structs.Job, _ []*structs.Node) []*structs.Allocation {
				job.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty}}
				return nil
			},
			wantPlaced: 2,
			wantPerKey: map[string]int{"r1": 1, "r2": 1},
		},
		{
			name: "limit two counts existing allocations",
			setup: func(job *structs.Job, nodes []*structs.Node) []*structs.Allocation {
				job.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty, RTarget: "2"}}
				return []*structs.Allocation{MockAllocFor(job, job.TaskGroups[0], nodes[0], 0)} // on r1
			},
			wantPlaced: 3,
			wantPerKey: map[string]int{"r1": 1, "r2": 2},
		},
		{
			name: "job level counts other groups",
			setup: func(job *structs.Job, nodes []*structs.Node) []*structs.Allocation {
				job.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty}}
				return []*structs.Allocation{MockAllocFor(job, job.TaskGroups[1], nodes[0], 0)} // api on r1
			},
			wantPlaced: 1,
			wantPerKey: map[string]int{"r2": 1},
		},
		{
			name: "group level ignores other groups",
			setup: func(job *structs.Job, nodes []*structs.Node) []*structs.Allocation {
				job.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty}}
				return []*structs.Allocation{MockAllocFor(job, job.TaskGroups[1], nodes[0], 0)}
			},
			wantPlaced: 2,
			wantPerKey: map[string]int{"r1": 1, "r2": 1},
		},
		{
			name: "a terminal existing allocation does not count",
			setup: func(job *structs.Job, nodes []*structs.Node) []*structs.Allocation {
				job.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty}}
				a := MockAllocFor(job, job.TaskGroups[0], nodes[0], 0)
				a.ClientStatus = structs.AllocClientStatusComplete
				return []*structs.Allocation{a}
			},
			wantPlaced: 2,
			wantPerKey: map[string]int{"r1": 1, "r2": 1},
		},
		{
			name: "the limit may be interpolated from the node",
			setup: func(job *structs.Job, nodes []*structs.Node) []*structs.Allocation {
				for _, n := range nodes {
					n.Meta["per_rack"] = "2"
				}
				job.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty, RTarget: "${meta.per_rack}"}}
				return nil
			},
			wantPlaced: 4,
			wantPerKey: map[string]int{"r1": 2, "r2": 2},
		},
		{
			name: "nodes without the property are filtered",
			setup: func(job *structs.Job, _ []*structs.Node) []*structs.Allocation {
				job.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${meta.zone}", Operand: structs.ConstraintDistinctProperty}}
				return nil
			},
			wantPlaced: 0,
			wantPerKey: map[string]int{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := newNodes()
			job := twoGroupJob(6)
			allocs := tc.setup(job, nodes)
			f := newFixture(1, nodes, allocs...)
			s := f.stack(job)
			placed := 0
			for i := 0; i < 6; i++ {
				if f.place(t, s, job, job.TaskGroups[0], i, nil) != nil {
					placed++
				}
			}
			if placed != tc.wantPlaced {
				t.Fatalf("placed %d, want %d (last metrics %+v)", placed, tc.wantPlaced, f.ctx.Metrics())
			}
			perKey := map[string]int{}
			for _, as := range f.plan.NodeAllocation {
				for _, a := range as {
					perKey[rackOf(nodes, a.NodeID)]++
				}
			}
			if len(perKey) != len(tc.wantPerKey) {
				t.Fatalf("per rack: got %v, want %v", perKey, tc.wantPerKey)
			}
			for k, n := range tc.wantPerKey {
				if perKey[k] != n {
					t.Fatalf("per rack: got %v, want %v", perKey, tc.wantPerKey)
				}
			}
			if m := f.ctx.Metrics(); m.NodesFiltered != 4 {
				t.Fatalf("the failed placement should filter all 4 nodes, got %+v", m)
			}
		})
	}
}
