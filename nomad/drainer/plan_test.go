package drainer

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/drover-sched/drover/nomad/state"
	"github.com/drover-sched/drover/nomad/state/statetest"
	"github.com/drover-sched/drover/structs"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// world builds a state store of nodes, jobs and allocs for one Plan.
type world struct {
	t      testing.TB
	st     *state.StateStore
	index  uint64
	nodes  map[string]*structs.Node
	jobs   map[string]*structs.Job
	allocs []*structs.Allocation
}

func newWorld(t testing.TB) *world {
	return &world{t: t, st: statetest.New(t), nodes: map[string]*structs.Node{}, jobs: map[string]*structs.Job{}}
}

func (w *world) next() uint64 { w.index++; return w.index }

func (w *world) node(id string, drain *structs.DrainStrategy) *structs.Node {
	n := &structs.Node{ID: id, Name: id, Datacenter: "dc1", Status: structs.NodeStatusReady, DrainStrategy: drain}
	n.Canonicalize()
	w.nodes[id] = n
	return n
}

func (w *world) job(id, typ string, count, maxParallel int) *structs.Job {
	j := &structs.Job{ID: id, Namespace: structs.DefaultNamespace, Type: typ, Priority: 50, TaskGroups: []*structs.TaskGroup{{
		Name: "g", Count: count, Migrate: &structs.MigrateStrategy{MaxParallel: maxParallel},
		Tasks: []*structs.Task{{Name: "t", Driver: "mock"}},
	}}}
	w.jobs[id] = j
	return j
}

// alloc adds a running alloc of job on node; healthy is its decided
// health, nil for none yet.
func (w *world) alloc(job *structs.Job, node string, healthy *bool) *structs.Allocation {
	i := len(w.allocs)
	a := &structs.Allocation{
		ID: fmt.Sprintf("a%02d", i), Namespace: job.Namespace, JobID: job.ID, Job: job, TaskGroup: "g",
		Name: fmt.Sprintf("%s.g[%d]", job.ID, i), NodeID: node,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusRunning,
	}
	if healthy != nil {
		a.DeploymentStatus = &structs.AllocDeploymentStatus{Healthy: healthy}
	}
	w.allocs = append(w.allocs, a)
	return a
}

func (w *world) plan(now time.Time) *Actions {
	w.t.Helper()
	for _, id := range sortedIDs(w.nodes) {
		if err := w.st.Write(w.next(), func(tx *state.Txn) error { return tx.UpsertNode(w.nodes[id], nil) }); err != nil {
			w.t.Fatal(err)
		}
	}
	for _, id := range sortedIDs(w.jobs) {
		if err := w.st.Write(w.next(), func(tx *state.Txn) error { return tx.UpsertJob(w.jobs[id]) }); err != nil {
			w.t.Fatal(err)
		}
	}
	if err := w.st.Write(w.next(), func(tx *state.Txn) error { return tx.UpsertAllocs(w.allocs) }); err != nil {
		w.t.Fatal(err)
	}
	n := 0
	acts, err := Plan(w.st, nil, now, func() string { n++; return fmt.Sprintf("eval-%d", n) })
	if err != nil {
		w.t.Fatal(err)
	}
	return acts
}

func sortedIDs[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func marked(acts *Actions) []string {
	if acts.Migrate == nil {
		return nil
	}
	return sortedIDs(acts.Migrate.Allocs)
}

func completed(acts *Actions) []string {
	var out []string
	for _, c := range acts.Complete {
		out = append(out, c.NodeID)
	}
	return out
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

var (
	yes = structs.BoolPtr(true)
	no  = structs.BoolPtr(false)
)

func hour() *structs.DrainStrategy {
	return &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: time.Hour}, ForceDeadline: t0.Add(time.Hour)}
}

func TestPlanPacesEachGroupBySettledAllocs(t *testing.T) {
	cases := []struct {
		name  string
		setup func(w *world)
		want  []string
	}{
		{"a group of 4 with max_parallel 1 moves one at a time", func(w *world) {
			w.node("n1", hour())
			j := w.job("web", structs.JobTypeService, 4, 1)
			for i := 0; i < 4; i++ {
				w.alloc(j, "n1", yes)
			}
		}, []string{"a00"}},
		{"max_parallel 2 moves two", func(w *world) {
			w.node("n1", hour())
			j := w.job("web", structs.JobTypeService, 4, 2)
			for i := 0; i < 4; i++ {
				w.alloc(j, "n1", yes)
			}
		}, []string{"a00", "a01"}},
		{"a decided but unhealthy alloc counts as settled, as in Nomad", func(w *world) {
			w.node("n1", hour())
			j := w.job("web", structs.JobTypeService, 4, 1)
			w.alloc(j, "n1", no)
			w.alloc(j, "n1", yes)
			w.alloc(j, "n1", yes)
			w.alloc(j, "n1", yes)
		}, []string{"a00"}},
		{"a replacement whose health is undecided holds the next one back", func(w *world) {
			w.node("n1", hour())
			w.node("n2", nil)
			j := w.job("web", structs.JobTypeService, 3, 1)
			w.alloc(j, "n1", yes)
			w.alloc(j, "n1", yes)
			w.alloc(j, "n2", nil) // the first one's replacement
		}, nil},
		{"a marked alloc whose replacement found no room does not count as settled", func(w *world) {
			w.node("n1", hour())
			j := w.job("web", structs.JobTypeService, 3, 1)
			a := w.alloc(j, "n1", yes)
			a.DesiredTransition.Migrate = yes
			w.alloc(j, "n1", yes)
			w.alloc(j, "n1", yes)
		}, nil},
		{"two draining nodes share one group's budget", func(w *world) {
			w.node("n1", hour())
			w.node("n2", hour())
			j := w.job("web", structs.JobTypeService, 4, 2)
			w.alloc(j, "n1", yes)
			w.alloc(j, "n2", yes)
			w.alloc(j, "n1", yes)
			w.alloc(j, "n2", yes)
		}, []string{"a00", "a02"}},
		{"allocs of a stopped job all go at once", func(w *world) {
			w.node("n1", hour())
			j := w.job("web", structs.JobTypeService, 3, 1)
			j.Stop = true
			for i := 0; i < 3; i++ {
				w.alloc(j, "n1", yes)
			}
		}, []string{"a00", "a01", "a02"}},
		{"batch allocs are not marked before the deadline", func(w *world) {
			w.node("n1", hour())
			j := w.job("etl", structs.JobTypeBatch, 2, 1)
			w.alloc(j, "n1", nil)
			w.alloc(j, "n1", nil)
		}, nil},
		{"system allocs wait while anything else is still on the node", func(w *world) {
			w.node("n1", hour())
			sys := w.job("agent", structs.JobTypeSystem, 1, 1)
			etl := w.job("etl", structs.JobTypeBatch, 1, 1)
			w.alloc(sys, "n1", nil)
			a := w.alloc(etl, "n1", nil)
			a.DesiredStatus = structs.AllocDesiredStatusStop // stopped, not yet reported
		}, nil},
		{"system allocs go once everything else has left", func(w *world) {
			w.node("n1", hour())
			sys := w.job("agent", structs.JobTypeSystem, 1, 1)
			etl := w.job("etl", structs.JobTypeBatch, 1, 1)
			w.alloc(sys, "n1", nil)
			a := w.alloc(etl, "n1", nil)
			a.ClientStatus = structs.AllocClientStatusComplete
		}, []string{"a00"}},
		{"system allocs stay when the drain ignores them", func(w *world) {
			d := hour()
			d.IgnoreSystemJobs = true
			w.node("n1", d)
			w.alloc(w.job("agent", structs.JobTypeSystem, 1, 1), "n1", nil)
		}, nil},
		{"at the deadline everything left goes, system allocs too", func(w *world) {
			d := hour()
			d.ForceDeadline = t0
			w.node("n1", d)
			w.alloc(w.job("agent", structs.JobTypeSystem, 1, 1), "n1", nil)
			w.alloc(w.job("etl", structs.JobTypeBatch, 1, 1), "n1", nil)
			w.alloc(w.job("web", structs.JobTypeService, 1, 1), "n1", nil)
		}, []string{"a00", "a01", "a02"}},
		{"at the deadline ignored system allocs still stay", func(w *world) {
			d := hour()
			d.ForceDeadline, d.IgnoreSystemJobs = t0, true
			w.node("n1", d)
			w.alloc(w.job("agent", structs.JobTypeSystem, 1, 1), "n1", nil)
			w.alloc(w.job("etl", structs.JobTypeBatch, 1, 1), "n1", nil)
		}, []string{"a01"}},
		{"allocs on nodes that do not drain are left alone", func(w *world) {
			w.node("n1", nil)
			w.alloc(w.job("web", structs.JobTypeService, 1, 1), "n1", yes)
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			tc.setup(w)
			equal(t, "marked", marked(w.plan(t0)), tc.want)
		})
	}
}

// One entry per pass: the marks, one eval per job, one event per node.
func TestPlanWritesOneEntryWithAnEvalPerJobAndAnEventPerNode(t *testing.T) {
	w := newWorld(t)
	w.node("n1", hour())
	w.node("n2", hour())
	web := w.job("web", structs.JobTypeService, 2, 2)
	api := w.job("api", structs.JobTypeService, 1, 1)
	w.alloc(web, "n1", yes)
	w.alloc(web, "n2", yes)
	w.alloc(api, "n1", yes)
	acts := w.plan(t0)
	equal(t, "marked", marked(acts), []string{"a00", "a01", "a02"})
	var jobs []string
	for _, e := range acts.Migrate.Evals {
		if e.TriggeredBy != structs.EvalTriggerNodeDrain || e.Status != structs.EvalStatusPending || e.CreateTime != t0.UnixNano() {
			t.Fatalf("eval %+v", e)
		}
		jobs = append(jobs, e.JobID)
	}
	sort.Strings(jobs)
	equal(t, "eval jobs", jobs, []string{"api", "web"})
	equal(t, "event nodes", sortedIDs(acts.Migrate.NodeEvents), []string{"n1", "n2"})
	if e := acts.Migrate.NodeEvents["n1"]; e.Message != EventMigrating+" (2)" || e.Subsystem != structs.NodeEventSubsystemDrain || !e.Timestamp.Equal(t0) {
		t.Fatalf("n1 event %+v", e)
	}
	if !acts.NextDeadline.Equal(t0.Add(time.Hour)) {
		t.Fatalf("next deadline %v", acts.NextDeadline)
	}
}

func TestPlanCompletesNodesWithNothingLeftToMove(t *testing.T) {
	w := newWorld(t)
	d := hour()
	d.MarkEligibleOnComplete = true
	w.node("empty", d)
	w.node("done", hour())
	w.node("busy", hour())
	ignoring := hour()
	ignoring.IgnoreSystemJobs = true
	w.node("only-ignored-system", ignoring)
	past := hour()
	past.ForceDeadline = t0.Add(-time.Minute)
	w.node("past-deadline-stopping", past)
	w.node("idle", nil)

	web := w.job("web", structs.JobTypeService, 5, 5)
	gone := w.alloc(web, "done", yes)
	gone.ClientStatus = structs.AllocClientStatusComplete
	gone.DesiredStatus = structs.AllocDesiredStatusStop
	w.alloc(web, "busy", yes)
	w.alloc(w.job("agent", structs.JobTypeSystem, 1, 1), "only-ignored-system", nil)
	stopping := w.alloc(web, "past-deadline-stopping", yes)
	stopping.DesiredStatus = structs.AllocDesiredStatusStop // told to stop; its client has not said so yet

	acts := w.plan(t0)
	equal(t, "completed", completed(acts), []string{"done", "empty", "only-ignored-system", "past-deadline-stopping"})
	for _, c := range acts.Complete {
		if !c.DrainComplete || c.DrainStrategy != nil || c.NodeEvent.Message != EventComplete {
			t.Fatalf("completion %+v", c)
		}
		if c.MarkEligible != (c.NodeID == "empty") {
			t.Fatalf("%s: MarkEligible %v, want it only where the drain asked", c.NodeID, c.MarkEligible)
		}
	}
}

// The same state plans the same entry: what the pass writes does not
// depend on map order.
func TestPlanIsDeterministic(t *testing.T) {
	w := newWorld(t)
	w.node("n1", hour())
	w.node("n2", hour())
	for _, id := range []string{"a", "b", "c"} {
		j := w.job(id, structs.JobTypeService, 4, 2)
		for i := 0; i < 4; i++ {
			w.alloc(j, []string{"n1", "n2"}[i%2], yes)
		}
	}
	first := fmt.Sprint(marked(w.plan(t0)))
	for i := 0; i < 20; i++ {
		acts, err := Plan(w.st, nil, t0, func() string { return "e" })
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(marked(acts)); got != first {
			t.Fatalf("pass %d marked %s, the first %s", i, got, first)
		}
	}
}
