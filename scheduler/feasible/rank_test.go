package feasible

import (
	"fmt"
	"math"
	"testing"

	"github.com/drover-sched/drover/structs"
)

// filler is an allocation of another job using cpu MHz and memory MB on
// node, to make it fuller.
func filler(node *structs.Node, cpu, memory int) *structs.Allocation {
	other := simpleJob(1)
	other.TaskGroups[0].Tasks[0].Resources.CPU = cpu
	other.TaskGroups[0].Tasks[0].Resources.MemoryMB = memory
	a := MockAllocFor(other, other.TaskGroups[0], node, 0)
	a.ClientStatus = structs.AllocClientStatusRunning
	return a
}

func TestRankingPrefersTheRightNode(t *testing.T) {
	cases := []struct {
		name string
		// setup gets two nodes (a, b) and returns state allocations and
		// select options; wantA says whether node a should win.
		setup func(f *fixture, a, b *structs.Node, job *structs.Job) *SelectOptions
		wantA bool
	}{
		{
			name: "binpack prefers the fuller node",
			setup: func(f *fixture, a, b *structs.Node, _ *structs.Job) *SelectOptions {
				f.state.addAllocs(filler(a, 2000, 4000))
				return nil
			},
			wantA: true,
		},
		{
			name: "the spread algorithm prefers the emptier node",
			setup: func(f *fixture, a, b *structs.Node, _ *structs.Job) *SelectOptions {
				f.state.addAllocs(filler(b, 2000, 4000))
				f.state.config = &structs.SchedulerConfiguration{SchedulerAlgorithm: structs.SchedulerAlgorithmSpread}
				return nil
			},
			wantA: true,
		},
		{
			name: "anti-affinity moves away from a node running the same group",
			setup: func(f *fixture, a, b *structs.Node, job *structs.Job) *SelectOptions {
				// b is fuller, so binpack alone would pick it, but it
				// runs the group already.
				existing := MockAllocFor(job, job.TaskGroups[0], b, 0)
				existing.ClientStatus = structs.AllocClientStatusRunning
				f.state.addAllocs(existing, filler(b, 1000, 1000))
				return nil
			},
			wantA: true,
		},
		{
			name: "the reschedule penalty moves away from the previous node",
			setup: func(f *fixture, a, b *structs.Node, _ *structs.Job) *SelectOptions {
				f.state.addAllocs(filler(b, 2000, 4000))
				return &SelectOptions{PenaltyNodeIDs: map[string]struct{}{b.ID: {}}}
			},
			wantA: true,
		},
		{
			name: "a positive affinity beats binpack",
			setup: func(f *fixture, a, b *structs.Node, job *structs.Job) *SelectOptions {
				f.state.addAllocs(filler(b, 2000, 4000))
				job.TaskGroups[0].Affinities = []*structs.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r-a", Weight: 50}}
				return nil
			},
			wantA: true,
		},
		{
			name: "a negative affinity avoids the matching node",
			setup: func(f *fixture, a, b *structs.Node, job *structs.Job) *SelectOptions {
				f.state.addAllocs(filler(b, 2000, 4000))
				job.Affinities = []*structs.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r-b", Weight: -50}}
				return nil
			},
			wantA: true,
		},
		{
			name: "the heavier affinity wins",
			setup: func(f *fixture, a, b *structs.Node, job *structs.Job) *SelectOptions {
				job.TaskGroups[0].Affinities = []*structs.Affinity{
					{LTarget: "${meta.rack}", Operand: "=", RTarget: "r-a", Weight: 80},
					{LTarget: "${meta.rack}", Operand: "=", RTarget: "r-b", Weight: 20},
				}
				return nil
			},
			wantA: true,
		},
		{
			name: "a task affinity counts",
			setup: func(f *fixture, a, b *structs.Node, job *structs.Job) *SelectOptions {
				job.TaskGroups[0].Tasks[0].Affinities = []*structs.Affinity{{LTarget: "${node.unique.name}", Operand: "=", RTarget: b.Name, Weight: 100}}
				f.state.addAllocs(filler(a, 2000, 4000))
				return nil
			},
			wantA: false,
		},
	}
	for _, tc := range cases {
		for seed := int64(0); seed < 4; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.name, seed), func(t *testing.T) {
				nodes := mockNodes(2, func(i int, n *structs.Node) { n.Meta["rack"] = []string{"r-a", "r-b"}[i] })
				a, b := nodes[0], nodes[1]
				f := newFixture(seed, nodes)
				job := simpleJob(2)
				opts := tc.setup(f, a, b, job)
				option := f.stack(job).Select(job.TaskGroups[0], opts)
				if option == nil {
					t.Fatalf("no node: %+v", f.ctx.Metrics())
				}
				if got := option.Node.ID == a.ID; got != tc.wantA {
					t.Fatalf("picked node a: %v, want %v (scores %+v)", got, tc.wantA, scoreMeta(f.ctx.Metrics()))
				}
			})
		}
	}
}

func scoreMeta(m *structs.AllocMetric) []string {
	var out []string
	for _, s := range m.ScoreMetaData {
		out = append(out, fmt.Sprintf("%s:%v=%.3f", structs.ShortID(s.NodeID), s.Scores, s.NormScore))
	}
	return out
}

func TestScoreMetaDataNamesTheScores(t *testing.T) {
	nodes := mockNodes(2, nil)
	f := newFixture(1, nodes)
	job := simpleJob(3)
	job.TaskGroups[0].Affinities = []*structs.Affinity{{LTarget: "${node.unique.id}", Operand: "=", RTarget: nodes[0].ID, Weight: 10}}
	option := f.stack(job).Select(job.TaskGroups[0], &SelectOptions{PenaltyNodeIDs: map[string]struct{}{nodes[1].ID: {}}})
	if option == nil {
		t.Fatal("no node")
	}
	meta := f.ctx.Metrics().ScoreMetaData
	if len(meta) != 2 {
		t.Fatalf("want both candidates scored, got %d", len(meta))
	}
	for i := 1; i < len(meta); i++ {
		if meta[i].NormScore > meta[i-1].NormScore {
			t.Fatal("score metadata should be best first")
		}
	}
	if meta[0].NodeID != option.Node.ID || meta[0].NormScore != option.FinalScore {
		t.Fatal("the first entry should be the chosen node")
	}
	byNode := map[string]*structs.NodeScoreMeta{}
	for _, m := range meta {
		byNode[m.NodeID] = m
	}
	if got, _ := byNode[nodes[0].ID].Scores.Get("node-affinity"); got != 1 {
		t.Fatalf("want a node-affinity score on the matching node, got %v", byNode[nodes[0].ID].Scores)
	}
	if got, _ := byNode[nodes[1].ID].Scores.Get("node-reschedule-penalty"); got != -1 {
		t.Fatalf("want the penalty on the previous node, got %v", byNode[nodes[1].ID].Scores)
	}
	for _, m := range meta {
		for _, name := range []string{"binpack", "job-anti-affinity", "node-affinity", "node-reschedule-penalty"} {
			if _, ok := m.Scores.Get(name); !ok {
				t.Fatalf("every candidate is scored on %s, got %v", name, m.Scores)
			}
		}
	}
}

// spreadCounts places count allocations and returns how many went to each
// datacenter.
func spreadCounts(t *testing.T, f *fixture, job *structs.Job, count int) map[string]int {
	t.Helper()
	s := f.stack(job)
	dcOf := map[string]string{}
	for _, n := range f.state.nodes {
		dcOf[n.ID] = n.Datacenter
	}
	got := map[string]int{}
	for i := 0; i < count; i++ {
		option := f.place(t, s, job, job.TaskGroups[0], i, nil)
		if option == nil {
			t.Fatalf("placement %d failed: %+v", i, f.ctx.Metrics())
		}
		got[dcOf[option.Node.ID]]++
	}
	return got
}

func bigNodes(n int, dc func(i int) string) []*structs.Node {
	return mockNodes(n, func(i int, node *structs.Node) {
		node.Datacenter = dc(i)
		node.NodeResources.Cpu.CpuShares = 64000
		node.NodeResources.Memory.MemoryMB = 128 * 1024
	})
}

func TestSpreadTargetsAreHonoured(t *testing.T) {
	for seed := int64(0); seed < 5; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			// Uneven node counts, so that node sampling alone would not
			// produce the targets.
			nodes := bigNodes(60, func(i int) string {
				switch {
				case i < 40:
					return "dc1"
				case i < 45:
					return "dc2"
				}
				return "dc3"
			})
			f := newFixture(seed, nodes)
			job := simpleJob(100)
			job.TaskGroups[0].Spreads = []*structs.Spread{{
				Attribute: "${node.datacenter}", Weight: 100,
				SpreadTarget: []*structs.SpreadTarget{{Value: "dc1", Percent: 20}, {Value: "dc2", Percent: 50}, {Value: "dc3", Percent: 30}},
			}}
			got := spreadCounts(t, f, job, 100)
			for dc, want := range map[string]int{"dc1": 20, "dc2": 50, "dc3": 30} {
				if math.Abs(float64(got[dc]-want)) > 1 {
					t.Fatalf("%s got %d allocations, want %d±1 (all %v)", dc, got[dc], want, got)
				}
			}
		})
	}
}

func TestSpreadWithoutTargetsIsEven(t *testing.T) {
	for seed := int64(0); seed < 5; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			nodes := bigNodes(40, func(i int) string {
				switch {
				case i < 30:
					return "dc1"
				case i < 38:
					return "dc2"
				}
				return "dc3"
			})
			// Existing allocations count: dc1 already has 4.
			job := simpleJob(34)
			var existing []*structs.Allocation
			for i := 0; i < 4; i++ {
				a := MockAllocFor(job, job.TaskGroups[0], nodes[i], i)
				a.ClientStatus = structs.AllocClientStatusRunning
				existing = append(existing, a)
			}
			f := newFixture(seed, nodes, existing...)
			job.Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 50}}
			got := spreadCounts(t, f, job, 29)
			got["dc1"] += 4
			// 33 in all: 11 each.
			for _, dc := range []string{"dc1", "dc2", "dc3"} {
				if math.Abs(float64(got[dc]-11)) > 1 {
					t.Fatalf("%s got %d, want 11±1 (all %v)", dc, got[dc], got)
				}
			}
		})
	}
}

func TestSpreadCountsFollowPlanChangesMadeOutsideSelect(t *testing.T) {
	// The scheduler may stop allocations and pop stops between Selects;
	// the incremental counts must follow.
	nodes := bigNodes(2, func(i int) string { return []string{"dc1", "dc2"}[i] })
	job := simpleJob(2)
	job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 100}}
	existing := MockAllocFor(job, job.TaskGroups[0], nodes[0], 0)
	existing.ClientStatus = structs.AllocClientStatusRunning
	f := newFixture(1, nodes, existing)
	s := f.stack(job)
	if option := s.Select(job.TaskGroups[0], nil); option == nil || option.Node.ID != nodes[1].ID {
		t.Fatal("dc1 has the existing allocation, dc2 should win")
	}
	f.plan.AppendStoppedAlloc(existing, "stop", "", "")
	f.plan.AppendAlloc(MockAllocFor(job, job.TaskGroups[0], nodes[1], 1))
	if option := s.Select(job.TaskGroups[0], nil); option == nil || option.Node.ID != nodes[0].ID {
		t.Fatal("after the stop, dc1 is empty and should win")
	}
	f.plan.PopUpdate(f.plan.NodeUpdate[nodes[0].ID][0])
	f.plan.AppendAlloc(MockAllocFor(job, job.TaskGroups[0], nodes[1], 2))
	if option := s.Select(job.TaskGroups[0], nil); option == nil || option.Node.ID != nodes[0].ID {
		t.Fatal("dc2 now has two, dc1 one: dc1 should win")
	}
	counts := f.ctx.jobTracker(job).propertyCounts("${node.datacenter}", "web")
	if counts["dc1"] != 1 || counts["dc2"] != 2 {
		t.Fatalf("counts should be dc1=1 dc2=2, got %v", counts)
	}
}

func TestSameSeedSameChoices(t *testing.T) {
	nodes := bigNodes(200, func(i int) string { return fmt.Sprintf("dc%d", i%4) })
	run := func(seed int64, spread bool) []string {
		f := newFixture(seed, nodes)
		job := MockJob() // with a dynamic port, so port choices are compared too
		job.ID = "same-job"
		job.Datacenters = []string{"*"}
		job.TaskGroups[0].Count = 50
		if spread {
			job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 50}}
		}
		s := f.stack(job)
		var out []string
		for i := 0; i < 50; i++ {
			option := f.place(t, s, job, job.TaskGroups[0], i, nil)
			if option == nil {
				t.Fatal("placement failed")
			}
			out = append(out, fmt.Sprintf("%s:%d", option.Node.ID, option.Resources.Shared.Ports[0].Value))
		}
		return out
	}
	for _, spread := range []bool{false, true} {
		a, b := run(7, spread), run(7, spread)
		if !equalStrings(a, b) {
			t.Fatalf("spread=%v: the same seed gave different placements", spread)
		}
		if c := run(8, spread); equalStrings(a, c) {
			t.Fatalf("spread=%v: a different seed should shuffle differently", spread)
		}
	}
}

func TestSpreadOverTenDatacentersOnALargeClusterIsExact(t *testing.T) {
	// The benchmark's shape, smaller: sampling looks at about log2(n)
	// nodes per placement, yet every datacenter gets its share.
	nodes := bigNodes(1000, func(i int) string { return fmt.Sprintf("dc%d", i%10) })
	f := newFixture(3, nodes)
	job := simpleJob(200)
	job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${node.datacenter}", Weight: 100}}
	got := spreadCounts(t, f, job, 200)
	for dc := 0; dc < 10; dc++ {
		if n := got[fmt.Sprintf("dc%d", dc)]; n != 20 {
			t.Fatalf("dc%d got %d, want 20 (all %v)", dc, n, got)
		}
	}
}
