package feasible

import (
	"sort"
	"testing"

	"github.com/drover-sched/drover/structs"
)

func nodeIDs(nodes []*structs.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	sort.Strings(out)
	return out
}

func TestReadyNodesInDCsAndPool(t *testing.T) {
	mk := func(name, dc, pool string, edit func(*structs.Node)) *structs.Node {
		n := MockNode()
		n.Name, n.Datacenter, n.NodePool = name, dc, pool
		if edit != nil {
			edit(n)
		}
		return n
	}
	nodes := []*structs.Node{
		mk("a", "us-east-1", "default", nil),
		mk("b", "us-east-2", "default", nil),
		mk("c", "eu-west-1", "default", nil),
		mk("d", "us-east-1", "gpu", nil),
		mk("down", "us-east-1", "default", func(n *structs.Node) { n.Status = structs.NodeStatusDown }),
		mk("init", "us-east-1", "default", func(n *structs.Node) { n.Status = structs.NodeStatusInit }),
		mk("ineligible", "us-east-1", "default", func(n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible }),
		mk("draining", "us-east-1", "default", func(n *structs.Node) { n.DrainStrategy = &structs.DrainStrategy{} }),
	}
	st := newMemState().addNodes(nodes...)
	cases := []struct {
		name  string
		dcs   []string
		pool  string
		want  []string
		perDC map[string]int
	}{
		{"exact datacenter and default pool", []string{"us-east-1"}, "default", []string{"a"}, map[string]int{"us-east-1": 1}},
		{"glob over datacenters", []string{"us-*"}, "default", []string{"a", "b"}, map[string]int{"us-east-1": 1, "us-east-2": 1}},
		{"star is every datacenter", []string{"*"}, "default", []string{"a", "b", "c"}, map[string]int{"us-east-1": 1, "us-east-2": 1, "eu-west-1": 1}},
		{"glob in the middle", []string{"*-west-*"}, "default", []string{"c"}, map[string]int{"eu-west-1": 1}},
		{"several datacenters", []string{"eu-west-1", "us-east-2"}, "default", []string{"b", "c"}, map[string]int{"us-east-2": 1, "eu-west-1": 1}},
		{"another pool", []string{"*"}, "gpu", []string{"d"}, map[string]int{"us-east-1": 1}},
		{"pool all", []string{"us-east-1"}, "all", []string{"a", "d"}, map[string]int{"us-east-1": 2}},
		{"no match", []string{"ap-*"}, "default", []string{}, map[string]int{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, perDC, err := ReadyNodesInDCsAndPool(st, tc.dcs, tc.pool)
			if err != nil {
				t.Fatal(err)
			}
			if g := nodeIDs(got); !equalStrings(g, tc.want) {
				t.Fatalf("nodes: got %v, want %v", g, tc.want)
			}
			if len(perDC) != len(tc.perDC) {
				t.Fatalf("per datacenter: got %v, want %v", perDC, tc.perDC)
			}
			for dc, n := range tc.perDC {
				if perDC[dc] != n {
					t.Fatalf("per datacenter: got %v, want %v", perDC, tc.perDC)
				}
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFeasibilityChain(t *testing.T) {
	cases := []struct {
		name string
		// edit changes the one node and the job.
		edit       func(n *structs.Node, job *structs.Job)
		wantFit    bool
		wantReason string
	}{
		{"a healthy driver passes", nil, true, ""},
		{"a missing driver filters", func(n *structs.Node, j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Driver = "docker"
		}, false, "missing drivers"},
		{"an unhealthy driver filters", func(n *structs.Node, j *structs.Job) {
			n.Drivers["exec"].Healthy = false
		}, false, "missing drivers"},
		{"an undetected driver filters", func(n *structs.Node, j *structs.Job) {
			n.Drivers["exec"].Detected = false
		}, false, "missing drivers"},
		{"a driver advertised only as an attribute passes", func(n *structs.Node, j *structs.Job) {
			delete(n.Drivers, "exec")
			n.Attributes = n.Attributes.With("driver.exec", "1")
		}, true, ""},
		{"every task's driver is needed", func(n *structs.Node, j *structs.Job) {
			tg := j.TaskGroups[0]
			side := tg.Tasks[0].Copy()
			side.Name, side.Driver = "side", "docker"
			tg.Tasks = append(tg.Tasks, side)
		}, false, "missing drivers"},
		{"a job constraint filters by its string", func(n *structs.Node, j *structs.Job) {
			j.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "windows"}}
		}, false, "${attr.kernel.name} = windows"},
		{"a group constraint filters", func(n *structs.Node, j *structs.Job) {
			j.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: "is_set"}}
		}, false, "${meta.rack} is_set"},
		{"a task constraint filters", func(n *structs.Node, j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Constraints = []*structs.Constraint{{LTarget: "${attr.arch}", Operand: "=", RTarget: "arm64"}}
		}, false, "${attr.arch} = arm64"},
		{"a task constraint that holds passes", func(n *structs.Node, j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Constraints = []*structs.Constraint{{LTarget: "${attr.arch}", Operand: "=", RTarget: "x86"}}
		}, true, ""},
		{"a node-unique constraint filters", func(n *structs.Node, j *structs.Job) {
			j.Constraints = []*structs.Constraint{{LTarget: "${node.unique.name}", Operand: "=", RTarget: "other"}}
		}, false, "${node.unique.name} = other"},
		{"a node outside the job's datacenters filters", func(n *structs.Node, j *structs.Job) {
			j.Datacenters = []string{"dc2"}
		}, false, "node not in datacenter"},
		{"a node outside the job's pool filters", func(n *structs.Node, j *structs.Job) {
			j.NodePool = "gpu"
		}, false, "node not in node pool"},
		{"a down node filters", func(n *structs.Node, j *structs.Job) {
			n.Status = structs.NodeStatusDown
		}, false, "node not ready"},
		{"a task user in the node's user.denylist filters", func(n *structs.Node, j *structs.Job) {
			n.Attributes = n.Attributes.With("user.denylist", "root").With("user.checked_drivers", "exec")
			j.TaskGroups[0].Tasks[0].User = "root"
		}, false, `user "root" is in the node's user.denylist for driver exec`},
		{"uid 0 by number filters where root is denied", func(n *structs.Node, j *structs.Job) {
			n.Attributes = n.Attributes.With("user.denylist", "root").With("user.checked_drivers", "exec")
			j.TaskGroups[0].Tasks[0].User = "0"
		}, false, `user "0" is the uid of "root" in the node's user.denylist for driver exec`},
		{"uid 0 with leading zeros filters too", func(n *structs.Node, j *structs.Job) {
			n.Attributes = n.Attributes.With("user.denylist", "root").With("user.checked_drivers", "exec")
			j.TaskGroups[0].Tasks[0].User = "000"
		}, false, `user "000" is the uid of "root" in the node's user.denylist for driver exec`},
		{"uid 0 passes where root is not denied", func(n *structs.Node, j *structs.Job) {
			n.Attributes = n.Attributes.With("user.denylist", "admin").With("user.checked_drivers", "exec")
			j.TaskGroups[0].Tasks[0].User = "0"
		}, true, ""},
		{"a task user the node does not deny passes", func(n *structs.Node, j *structs.Job) {
			n.Attributes = n.Attributes.With("user.denylist", "root").With("user.checked_drivers", "exec")
			j.TaskGroups[0].Tasks[0].User = "app"
		}, true, ""},
		{"a denied user of a driver the node does not check passes", func(n *structs.Node, j *structs.Job) {
			n.Attributes = n.Attributes.With("user.denylist", "root").With("user.checked_drivers", "docker")
			j.TaskGroups[0].Tasks[0].User = "root"
		}, true, ""},
		{"an empty user is exec's default, nobody", func(n *structs.Node, j *structs.Job) {
			n.Attributes = n.Attributes.With("user.denylist", "root, nobody").With("user.checked_drivers", "exec")
		}, false, `user "nobody" is in the node's user.denylist for driver exec`},
		{"a node that advertises no denylist passes", func(n *structs.Node, j *structs.Job) {
			j.TaskGroups[0].Tasks[0].User = "root"
		}, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node := MockNode()
			job := simpleJob(1)
			if tc.edit != nil {
				tc.edit(node, job)
			}
			MockComputeClass(node)
			f := newFixture(1, []*structs.Node{node})
			s := NewGenericStack(false, f.ctx)
			s.SetNodes([]*structs.Node{node})
			s.SetJob(job)
			option := s.Select(job.TaskGroups[0], nil)
			m := f.ctx.Metrics()
			if (option != nil) != tc.wantFit {
				t.Fatalf("fit: got %v, want %v (metrics %+v)", option != nil, tc.wantFit, m)
			}
			if m.NodesEvaluated != 1 {
				t.Fatalf("want 1 node evaluated, got %d", m.NodesEvaluated)
			}
			if tc.wantReason != "" {
				if m.NodesFiltered != 1 || m.ConstraintFiltered[tc.wantReason] != 1 {
					t.Fatalf("want 1 node filtered by %q, got %+v", tc.wantReason, m.ConstraintFiltered)
				}
				if m.ClassFiltered[node.ComputedClass] != 1 {
					t.Fatalf("want the class counted, got %+v", m.ClassFiltered)
				}
			}
		})
	}
}

func TestMetricsCountFilteredNodesByConstraintAcrossAClass(t *testing.T) {
	// Ten nodes of one class, all refused by a class-wide constraint: the
	// constraint is evaluated once, but every node is counted under it.
	nodes := mockNodes(10, nil)
	f := newFixture(1, nodes)
	job := simpleJob(1)
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "windows"}}
	s := f.stack(job)
	if option := s.Select(job.TaskGroups[0], nil); option != nil {
		t.Fatal("no node should fit")
	}
	m := f.ctx.Metrics()
	if m.NodesEvaluated != 10 || m.NodesFiltered != 10 {
		t.Fatalf("want 10 evaluated and filtered, got %+v", m)
	}
	if got := m.ConstraintFiltered["${attr.kernel.name} = windows"]; got != 10 {
		t.Fatalf("want 10 under the constraint, got %v", m.ConstraintFiltered)
	}
	if got := f.ctx.ClassEligibility(); len(got) != 1 || got[nodes[0].ComputedClass] {
		t.Fatalf("the class should be recorded ineligible, got %v", got)
	}
	if f.ctx.EscapedComputedClass() {
		t.Fatal("a class-wide constraint must not escape")
	}
}

func TestClassCacheIsReusedButUniqueConstraintsEscapeIt(t *testing.T) {
	// Two nodes of the same class differ only in a unique attribute. A
	// constraint on it must be judged per node, and marks the job escaped.
	nodes := mockNodes(2, nil)
	nodes[0].Meta["unique.rack"] = "r1"
	nodes[1].Meta["unique.rack"] = "r2"
	for _, n := range nodes {
		MockComputeClass(n)
	}
	if nodes[0].ComputedClass != nodes[1].ComputedClass {
		t.Fatal("unique meta must not change the computed class")
	}
	f := newFixture(1, nodes)
	job := simpleJob(1)
	job.Constraints = []*structs.Constraint{
		{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"},
		{LTarget: "${meta.unique.rack}", Operand: "=", RTarget: "r2"},
	}
	s := f.stack(job)
	for i := 0; i < 4; i++ {
		option := s.Select(job.TaskGroups[0], nil)
		if option == nil || option.Node.ID != nodes[1].ID {
			t.Fatalf("select %d: want node r2, got %+v", i, option)
		}
	}
	if !f.ctx.EscapedComputedClass() {
		t.Fatal("a constraint on unique meta must escape the class cache")
	}
	if got := f.ctx.ClassEligibility(); !got[nodes[0].ComputedClass] {
		t.Fatalf("the class passes the class-wide constraint, got %v", got)
	}
}

func TestComputeClass(t *testing.T) {
	base := MockNode()
	same := func(n *structs.Node) bool {
		a, _ := ComputeClass(base)
		b, _ := ComputeClass(n)
		return a == b
	}
	cases := []struct {
		name string
		edit func(*structs.Node)
		same bool
	}{
		{"a copy has the same class", func(*structs.Node) {}, true},
		{"a different ID and name keep the class", func(n *structs.Node) { n.ID, n.Name = "x", "y" }, true},
		{"unique attributes are left out", func(n *structs.Node) { n.Attributes = n.Attributes.With("unique.network.ip-address", "10.0.0.9") }, true},
		{"unique meta is left out", func(n *structs.Node) { n.Meta["unique.serial"] = "abc" }, true},
		{"resources are left out", func(n *structs.Node) { n.NodeResources.Memory.MemoryMB *= 2 }, true},
		{"an attribute changes the class", func(n *structs.Node) { n.Attributes = n.Attributes.With("kernel.name", "darwin") }, false},
		{"meta changes the class", func(n *structs.Node) { n.Meta["rack"] = "r1" }, false},
		{"the datacenter changes the class", func(n *structs.Node) { n.Datacenter = "dc9" }, false},
		{"the pool changes the class", func(n *structs.Node) { n.NodePool = "gpu" }, false},
		{"the node class changes the class", func(n *structs.Node) { n.NodeClass = "small" }, false},
		{"moving a value between keys changes the class", func(n *structs.Node) {
			n.Attributes = n.Attributes.With("arch", "")
			n.Attributes = n.Attributes.With("archx86", "")
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := base.Copy()
			tc.edit(n)
			if got := same(n); got != tc.same {
				t.Fatalf("same class: got %v, want %v", got, tc.same)
			}
		})
	}
	if _, err := ComputeClass(nil); err == nil {
		t.Fatal("a nil node should be an error")
	}
}
