package feasible

import (
	"math/rand"
	"sort"
	"testing"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// memState is a minimal in-memory State for tests and benchmarks.
type memState struct {
	nodes  map[string]*structs.Node
	allocs map[string]*structs.Allocation
	config *structs.SchedulerConfiguration
}

func newMemState() *memState {
	return &memState{nodes: map[string]*structs.Node{}, allocs: map[string]*structs.Allocation{}}
}

func (s *memState) addNodes(nodes ...*structs.Node) *memState {
	for _, n := range nodes {
		s.nodes[n.ID] = n
	}
	return s
}

func (s *memState) addAllocs(allocs ...*structs.Allocation) *memState {
	for _, a := range allocs {
		s.allocs[a.ID] = a
	}
	return s
}

type sliceIter struct {
	items []any
}

func (it *sliceIter) WatchCh() <-chan struct{} { return nil }
func (it *sliceIter) Next() any {
	if len(it.items) == 0 {
		return nil
	}
	x := it.items[0]
	it.items = it.items[1:]
	return x
}

func (s *memState) Nodes(memdb.WatchSet) (memdb.ResultIterator, error) {
	ids := make([]string, 0, len(s.nodes))
	for id := range s.nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	it := &sliceIter{}
	for _, id := range ids {
		it.items = append(it.items, s.nodes[id])
	}
	return it, nil
}

func (s *memState) NodeByID(_ memdb.WatchSet, id string) (*structs.Node, error) {
	return s.nodes[id], nil
}

func (s *memState) AllocsByNode(_ memdb.WatchSet, node string) ([]*structs.Allocation, error) {
	var out []*structs.Allocation
	for _, a := range s.sortedAllocs() {
		if a.NodeID == node {
			out = append(out, a)
		}
	}
	return out, nil
}

func (s *memState) AllocsByJob(_ memdb.WatchSet, ns, jobID string, _ bool) ([]*structs.Allocation, error) {
	var out []*structs.Allocation
	for _, a := range s.sortedAllocs() {
		if a.Namespace == ns && a.JobID == jobID {
			out = append(out, a)
		}
	}
	return out, nil
}

func (s *memState) sortedAllocs() []*structs.Allocation {
	out := make([]*structs.Allocation, 0, len(s.allocs))
	for _, a := range s.allocs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (s *memState) SchedulerConfig() (uint64, *structs.SchedulerConfiguration, error) {
	return 1, s.config, nil
}

// fixture is a state, a plan and a context with a fixed seed.
type fixture struct {
	state *memState
	plan  *structs.Plan
	ctx   *EvalContext
}

func newFixture(seed int64, nodes []*structs.Node, allocs ...*structs.Allocation) *fixture {
	st := newMemState().addNodes(nodes...).addAllocs(allocs...)
	plan := &structs.Plan{NodeUpdate: map[string][]*structs.Allocation{}, NodeAllocation: map[string][]*structs.Allocation{}}
	return &fixture{state: st, plan: plan, ctx: NewEvalContext(st, plan, rand.New(rand.NewSource(seed)), nil)}
}

// stack returns a generic stack over every node of the fixture, in ID
// order, with job set.
func (f *fixture) stack(job *structs.Job) Stack {
	s := NewGenericStack(job.Type == structs.JobTypeBatch, f.ctx)
	nodes, _, err := ReadyNodesInDCsAndPool(f.state, []string{"*"}, structs.AllNodePools)
	if err != nil {
		panic(err)
	}
	s.SetNodes(nodes)
	s.SetJob(job)
	return s
}

// place selects a node and appends the placement to the plan, as the
// scheduler does.
func (f *fixture) place(t testing.TB, s Stack, job *structs.Job, tg *structs.TaskGroup, idx int, opts *SelectOptions) *RankedNode {
	t.Helper()
	option := s.Select(tg, opts)
	if option == nil {
		return nil
	}
	a := MockAllocFor(job, tg, option.Node, idx)
	a.AllocatedResources = option.Resources
	f.plan.AppendAlloc(a)
	return option
}

// nodes builds n mock nodes, each changed by edit (may be nil).
func mockNodes(n int, edit func(i int, node *structs.Node)) []*structs.Node {
	out := make([]*structs.Node, n)
	for i := range out {
		node := MockNode()
		if edit != nil {
			edit(i, node)
		}
		MockComputeClass(node)
		out[i] = node
	}
	return out
}

// simpleJob is MockJob without ports or constraints, with count.
func simpleJob(count int) *structs.Job {
	job := MockJob()
	job.Datacenters = []string{"*"}
	job.Constraints = nil
	job.TaskGroups[0].Count = count
	job.TaskGroups[0].Networks = nil
	return job
}
