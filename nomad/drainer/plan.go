package drainer

import (
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/drover-sched/drover/structs"
	memdb "github.com/hashicorp/go-memdb"
)

// Node event messages the drainer records (subsystem Drain).
const (
	EventMigrating        = "Node drain: migrating allocations"
	EventStoppingSystem   = "Node drain: stopping system allocations"
	EventDeadline         = "Node drain: deadline reached, stopping remaining allocations"
	EventComplete         = "Node drain complete"
	eventDetailCount      = "allocations"
	eventDetailDeadlineAt = "deadline"
)

// Actions is what one pass decided.
type Actions struct {
	// Migrate marks allocations to migrate, with one eval per job whose
	// allocations it marks and one event per draining node it touches:
	// one raft entry. Nil when there is nothing to mark.
	Migrate *structs.AllocUpdateDesiredTransitionRequest
	// Complete ends the drains that have nothing left to move, one raft
	// entry each.
	Complete []*structs.NodeUpdateDrainRequest
	// NextDeadline is the earliest drain deadline still ahead, zero if no
	// draining node has one: the loop must look again then.
	NextDeadline time.Time
}

// Empty reports whether the pass has nothing to write.
func (a *Actions) Empty() bool { return a.Migrate == nil && len(a.Complete) == 0 }

// planner holds one pass's inputs and what it has decided so far.
type planner struct {
	st    State
	ws    memdb.WatchSet
	now   time.Time
	newID func() string

	draining map[string]*structs.Node
	marks    map[string]*structs.Allocation // alloc ID -> alloc marked this pass
	perNode  map[string]int                 // node ID -> allocs marked on it this pass
	why      map[string]string              // node ID -> event message
	out      *Actions
}

// Plan decides one pass of the drainer over the snapshot st at now. Every
// read adds its watch channel to ws (when not nil), so the caller can
// sleep until something the pass depended on changes. newID makes eval
// IDs (the leader makes them; they arrive in the raft entry).
func Plan(st State, ws memdb.WatchSet, now time.Time, newID func() string) (*Actions, error) {
	p := &planner{st: st, ws: ws, now: now, newID: newID, draining: map[string]*structs.Node{},
		marks: map[string]*structs.Allocation{}, perNode: map[string]int{}, why: map[string]string{}, out: &Actions{}}
	it, err := st.Nodes(ws)
	if err != nil {
		return nil, err
	}
	for raw := it.Next(); raw != nil; raw = it.Next() {
		n := raw.(*structs.Node)
		if n.DrainStrategy != nil {
			p.draining[n.ID] = n
		}
	}
	if len(p.draining) == 0 {
		return p.out, nil
	}
	ids := make([]string, 0, len(p.draining))
	for id := range p.draining {
		ids = append(ids, id)
	}
	sort.Strings(ids)

	// Service allocs on nodes still inside their deadline, by job: they
	// are paced per group, across every draining node.
	paced := map[structs.NamespacedID][]*structs.Allocation{}
	for _, id := range ids {
		if err := p.planNode(p.draining[id], paced); err != nil {
			return nil, err
		}
	}
	if err := p.pace(paced); err != nil {
		return nil, err
	}
	p.out.Migrate = p.migrateRequest()
	return p.out, nil
}

// planNode decides what happens on one draining node: everything at the
// deadline, system allocs once the rest has left, completion once nothing
// is left. Service allocs inside the deadline go to paced.
func (p *planner) planNode(n *structs.Node, paced map[structs.NamespacedID][]*structs.Allocation) error {
	ds := n.DrainStrategy
	allocs, err := p.st.AllocsByNode(p.ws, n.ID)
	if err != nil {
		return err
	}
	sortAllocs(allocs)
	passed := ds.DeadlinePassed(p.now)
	if !passed && !ds.ForceDeadline.IsZero() && (p.out.NextDeadline.IsZero() || ds.ForceDeadline.Before(p.out.NextDeadline)) {
		p.out.NextDeadline = ds.ForceDeadline
	}

	var remaining, system []*structs.Allocation // still on the node, must move
	othersLeft := true                          // every non-system alloc reported stopped
	for _, a := range allocs {
		if a.ClientTerminalStatus() || a.Job == nil {
			continue
		}
		isSystem := a.Job.Type == structs.JobTypeSystem
		if isSystem && ds.IgnoreSystemJobs {
			continue // stays, and does not hold the drain up
		}
		if passed && a.ServerTerminalStatus() {
			continue // told to stop; the deadline needs no more
		}
		remaining = append(remaining, a)
		if isSystem {
			system = append(system, a)
			continue
		}
		othersLeft = false
		if passed || a.ServerTerminalStatus() || a.DesiredTransition.ShouldMigrate() {
			continue
		}
		if a.Job.Type == structs.JobTypeService {
			k := a.NamespacedJobID()
			paced[k] = append(paced[k], a)
		}
		// Batch and sysbatch allocs run until they finish or the deadline.
	}

	switch {
	case len(remaining) == 0:
		p.complete(n)
	case passed:
		for _, a := range remaining {
			if !a.DesiredTransition.ShouldMigrate() {
				p.mark(a, EventDeadline)
			}
		}
	case othersLeft:
		for _, a := range system {
			if !a.ServerTerminalStatus() && !a.DesiredTransition.ShouldMigrate() {
				p.mark(a, EventStoppingSystem)
			}
		}
	}
	return nil
}

// pace marks, for every group of every job in paced, as many of its
// drainable allocs as its migrate block allows (see the package doc).
func (p *planner) pace(paced map[structs.NamespacedID][]*structs.Allocation) error {
	keys := make([]structs.NamespacedID, 0, len(paced))
	for k := range paced {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Namespace != keys[j].Namespace {
			return keys[i].Namespace < keys[j].Namespace
		}
		return keys[i].ID < keys[j].ID
	})
	for _, k := range keys {
		job, err := p.st.JobByID(p.ws, k.Namespace, k.ID)
		if err != nil {
			return err
		}
		all, err := p.st.AllocsByJob(p.ws, k.Namespace, k.ID, true)
		if err != nil {
			return err
		}
		byGroup := map[string][]*structs.Allocation{}
		for _, a := range paced[k] {
			byGroup[a.TaskGroup] = append(byGroup[a.TaskGroup], a)
		}
		groups := make([]string, 0, len(byGroup))
		for g := range byGroup {
			groups = append(groups, g)
		}
		sort.Strings(groups)
		for _, g := range groups {
			drainable := byGroup[g]
			n := len(drainable)
			var tg *structs.TaskGroup
			if job != nil && !job.Stop {
				tg = job.LookupTaskGroup(g)
			}
			if tg != nil {
				// Without its job or group there is nothing to keep up:
				// the scheduler stops these allocs, so all may go.
				n = min(n, settled(all, g)-(tg.Count-maxParallel(tg)))
			}
			for i := 0; i < n; i++ {
				p.mark(drainable[i], EventMigrating)
			}
		}
	}
	return nil
}

// settled counts the group's allocs that are up and whose health is
// decided (see the package doc).
func settled(all []*structs.Allocation, group string) int {
	n := 0
	for _, a := range all {
		if a.TaskGroup != group || a.TerminalStatus() || a.DesiredTransition.ShouldMigrate() {
			continue
		}
		if a.DeploymentStatus != nil && a.DeploymentStatus.Healthy != nil {
			n++
		}
	}
	return n
}

func maxParallel(tg *structs.TaskGroup) int {
	if tg.Migrate == nil || tg.Migrate.MaxParallel < 1 {
		return structs.DefaultMigrateStrategy().MaxParallel
	}
	return tg.Migrate.MaxParallel
}

func (p *planner) mark(a *structs.Allocation, why string) {
	if _, ok := p.marks[a.ID]; ok {
		return
	}
	p.marks[a.ID] = a
	p.perNode[a.NodeID]++
	if _, ok := p.why[a.NodeID]; !ok || why == EventDeadline {
		p.why[a.NodeID] = why
	}
}

func (p *planner) complete(n *structs.Node) {
	p.out.Complete = append(p.out.Complete, &structs.NodeUpdateDrainRequest{
		NodeID: n.ID, MarkEligible: n.DrainStrategy.MarkEligibleOnComplete, DrainComplete: true,
		UpdatedAt: p.now.Unix(),
		NodeEvent: &structs.NodeEvent{Message: EventComplete, Subsystem: structs.NodeEventSubsystemDrain, Timestamp: p.now},
	})
}

// migrateRequest builds the one raft entry of this pass's marks.
func (p *planner) migrateRequest() *structs.AllocUpdateDesiredTransitionRequest {
	if len(p.marks) == 0 {
		return nil
	}
	req := &structs.AllocUpdateDesiredTransitionRequest{
		Allocs:     make(map[string]*structs.DesiredTransition, len(p.marks)),
		NodeEvents: map[string]*structs.NodeEvent{},
	}
	ids := make([]string, 0, len(p.marks))
	for id := range p.marks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	jobs := map[structs.NamespacedID]bool{}
	for _, id := range ids {
		a := p.marks[id]
		req.Allocs[id] = &structs.DesiredTransition{Migrate: structs.BoolPtr(true)}
		k := a.NamespacedJobID()
		if jobs[k] {
			continue
		}
		jobs[k] = true
		req.Evals = append(req.Evals, &structs.Evaluation{
			ID: p.newID(), Namespace: a.Namespace, Priority: a.Job.Priority, Type: a.Job.Type,
			TriggeredBy: structs.EvalTriggerNodeDrain, JobID: a.JobID, Status: structs.EvalStatusPending,
			CreateTime: p.now.UnixNano(), ModifyTime: p.now.UnixNano(),
		})
	}
	for node, count := range p.perNode {
		details := map[string]string{eventDetailCount: strconv.Itoa(count)}
		if d := p.draining[node].DrainStrategy; !d.ForceDeadline.IsZero() {
			details[eventDetailDeadlineAt] = d.ForceDeadline.UTC().Format(time.RFC3339)
		}
		req.NodeEvents[node] = &structs.NodeEvent{
			Message: fmt.Sprintf("%s (%d)", p.why[node], count), Subsystem: structs.NodeEventSubsystemDrain,
			Timestamp: p.now, Details: details,
		}
	}
	return req
}

// sortAllocs orders allocs by job, group and name index, so a pass picks
// the same allocs every time it runs on the same state.
func sortAllocs(allocs []*structs.Allocation) {
	sort.SliceStable(allocs, func(i, j int) bool {
		a, b := allocs[i], allocs[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.JobID != b.JobID {
			return a.JobID < b.JobID
		}
		if a.TaskGroup != b.TaskGroup {
			return a.TaskGroup < b.TaskGroup
		}
		if a.Index() != b.Index() {
			return a.Index() < b.Index()
		}
		return a.ID < b.ID
	})
}
