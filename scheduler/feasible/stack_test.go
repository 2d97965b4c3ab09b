package feasible

import (
	"math"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func TestSelectPlacesEveryAllocationOfASimpleJob(t *testing.T) {
	nodes := mockNodes(10, nil)
	f := newFixture(1, nodes)
	job := simpleJob(10)
	s := f.stack(job)
	for i := 0; i < 10; i++ {
		if option := f.place(t, s, job, job.TaskGroups[0], i, nil); option == nil {
			t.Fatalf("placement %d: no node, metrics %+v", i, f.ctx.Metrics())
		}
	}
}

func TestSelectSamplesALimitedNumberOfNodes(t *testing.T) {
	nodes := mockNodes(1000, nil)
	cases := []struct {
		name      string
		batch     bool
		spread    bool
		wantLimit int
	}{
		{"a service scores about log2(n) nodes", false, false, int(math.Ceil(math.Log2(1000)))},
		{"a batch job scores two", true, false, 2},
		{"a spread group scores about as many as binpack", false, true, int(math.Ceil(math.Log2(1000)))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(1, nodes)
			job := simpleJob(5)
			if tc.batch {
				job.Type = structs.JobTypeBatch
			}
			if tc.spread {
				job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 50}}
				for i, n := range nodes {
					n.Meta["rack"] = string(rune('a' + i%4))
				}
			}
			s := f.stack(job)
			for i := 0; i < 5; i++ {
				if f.place(t, s, job, job.TaskGroups[0], i, nil) == nil {
					t.Fatal("placement failed")
				}
				// Candidates with a negative score do not count toward
				// the limit, up to maxNegativeSkips of them.
				if got := f.ctx.Metrics().NodesEvaluated; got < tc.wantLimit || got > tc.wantLimit+maxNegativeSkips {
					t.Fatalf("placement %d evaluated %d nodes, want about %d", i, got, tc.wantLimit)
				}
			}
		})
	}
}

func TestPreferredNodesAreTriedFirst(t *testing.T) {
	nodes := mockNodes(4, nil)
	// The preferred node is emptier; binpack alone would pick another.
	var fillers []*structs.Allocation
	for _, n := range nodes[1:] {
		fillers = append(fillers, filler(n, 2000, 4000))
	}
	t.Run("a preferred node that fits wins", func(t *testing.T) {
		f := newFixture(1, nodes, fillers...)
		job := simpleJob(1)
		option := f.stack(job).Select(job.TaskGroups[0], &SelectOptions{PreferredNodes: nodes[:1]})
		if option == nil || option.Node.ID != nodes[0].ID {
			t.Fatalf("want the preferred node, got %+v", option)
		}
	})
	t.Run("when no preferred node fits, every node is considered", func(t *testing.T) {
		f := newFixture(1, nodes, fillers...)
		job := simpleJob(1)
		job.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${node.unique.id}", Operand: "!=", RTarget: nodes[0].ID}}
		option := f.stack(job).Select(job.TaskGroups[0], &SelectOptions{PreferredNodes: nodes[:1]})
		if option == nil || option.Node.ID == nodes[0].ID {
			t.Fatalf("want another node, got %+v", option)
		}
		if f.ctx.Metrics().ConstraintFiltered["${node.unique.id} != "+nodes[0].ID] < 1 {
			t.Fatalf("the refused preferred node should show in the metrics: %+v", f.ctx.Metrics())
		}
	})
}

func TestSystemStackConsidersExactlyTheNodesSet(t *testing.T) {
	nodes := mockNodes(3, nil)
	job := MockSystemJob()
	job.Constraints = nil
	t.Run("the one node set is the one chosen", func(t *testing.T) {
		for _, target := range nodes {
			f := newFixture(1, nodes)
			s := NewSystemStack(false, f.ctx)
			s.SetNodes([]*structs.Node{target})
			s.SetJob(job)
			option := s.Select(job.TaskGroups[0], nil)
			if option == nil || option.Node.ID != target.ID {
				t.Fatalf("want %s, got %+v", target.Name, option)
			}
			if m := f.ctx.Metrics(); m.NodesEvaluated != 1 || len(m.ScoreMetaData) != 1 {
				t.Fatalf("want one node evaluated and scored, got %+v", m)
			}
		}
	})
	t.Run("a node that does not fit gives nil and says why", func(t *testing.T) {
		small := nodes[0].Copy()
		small.NodeResources.Memory.MemoryMB = 300
		f := newFixture(1, []*structs.Node{small})
		s := NewSystemStack(true, f.ctx)
		s.SetNodes([]*structs.Node{small})
		s.SetJob(job)
		if option := s.Select(job.TaskGroups[0], nil); option != nil {
			t.Fatal("the node is too small")
		}
		if got := f.ctx.Metrics().DimensionExhausted["memory"]; got != 1 {
			t.Fatalf("want memory exhaustion, got %+v", f.ctx.Metrics())
		}
	})
	t.Run("several nodes are tried in the given order", func(t *testing.T) {
		f := newFixture(1, nodes)
		s := NewSystemStack(false, f.ctx)
		s.SetNodes([]*structs.Node{nodes[2], nodes[0]})
		s.SetJob(job)
		if option := s.Select(job.TaskGroups[0], nil); option == nil || option.Node.ID != nodes[2].ID {
			t.Fatal("want the first node given")
		}
	})
}

func TestSelectWithoutAJobReturnsNil(t *testing.T) {
	f := newFixture(1, mockNodes(1, nil))
	s := NewGenericStack(false, f.ctx)
	s.SetNodes(mockNodes(1, nil))
	if s.Select(&structs.TaskGroup{Name: "x"}, nil) != nil {
		t.Fatal("no job, no placement")
	}
}
