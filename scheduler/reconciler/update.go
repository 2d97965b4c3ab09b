package reconciler

import (
	"fmt"
	"reflect"
	"time"

	"github.com/drover-sched/drover/structs"
)

// change is how an alloc of an older job version reaches the current one.
type change uint8

const (
	// unchanged: the alloc runs the current version.
	unchanged change = iota
	// inPlace: only fields the running tasks do not depend on changed (count,
	// policies, services, job meta, priority); the alloc is rewritten with
	// the new job and keeps running.
	inPlace
	// destructive: what runs or where it may run changed; the alloc is
	// replaced.
	destructive
)

// Fields that may change without restarting a task: they steer the servers
// and the client's supervision, not the process. Everything else in a task
// (driver, config, env, meta, resources, artifacts, templates, user, ...)
// is destructive.
var inPlaceTaskFields = map[string]bool{
	"Services": true, "RestartPolicy": true, "KillTimeout": true, "KillSignal": true,
	"ShutdownDelay": true, "LogConfig": true,
}

// Group fields that decide where an alloc may run or what it is given; a
// change to any of them is destructive. Other group fields (Count, Update,
// Migrate, ReschedulePolicy, RestartPolicy, Services, Disconnect, ...)
// change in place.
var placementGroupFields = []string{
	"Constraints", "Affinities", "Spreads", "Networks", "EphemeralDisk", "Volumes", "Meta",
}

// Job fields that decide where allocs may run.
var placementJobFields = []string{
	"Datacenters", "NodePool", "Constraints", "Affinities", "Spreads",
}

// compareVersions says how an alloc running oldJob's group reaches newJob's
// group, with the first destructive difference found as the reason.
func compareVersions(oldJob, newJob *structs.Job, group string) (change, string) {
	if oldJob == nil {
		return destructive, "alloc has no job version"
	}
	if sameVersion(oldJob, newJob) {
		return unchanged, ""
	}
	oldTG, newTG := oldJob.LookupTaskGroup(group), newJob.LookupTaskGroup(group)
	if oldTG == nil || newTG == nil {
		return destructive, fmt.Sprintf("group %q is new", group)
	}
	if f := firstDiff(oldJob, newJob, placementJobFields); f != "" {
		return destructive, "job " + f + " changed"
	}
	if f := firstDiff(oldTG, newTG, placementGroupFields); f != "" {
		return destructive, "group " + f + " changed"
	}
	if len(oldTG.Tasks) != len(newTG.Tasks) {
		return destructive, "tasks added or removed"
	}
	for _, nt := range newTG.Tasks {
		ot := oldTG.LookupTask(nt.Name)
		if ot == nil {
			return destructive, fmt.Sprintf("task %q is new", nt.Name)
		}
		if f := firstDiff(ot, nt, destructiveTaskFields); f != "" {
			return destructive, fmt.Sprintf("task %q %s changed", nt.Name, f)
		}
	}
	return inPlace, ""
}

// comparer returns compareVersions against newJob's group, remembering the
// answer per old version: allocs of one version share its *Job, so a
// thousand allocs cost one comparison.
func comparer(newJob *structs.Job, group string) func(old *structs.Job) change {
	seen := map[*structs.Job]change{}
	return func(old *structs.Job) change {
		ch, ok := seen[old]
		if !ok {
			ch, _ = compareVersions(old, newJob, group)
			seen[old] = ch
		}
		return ch
	}
}

// firstDiff returns the first of the named fields that differs between two
// structs of the same type (pointers allowed), or "".
func firstDiff(a, b any, fields []string) string {
	va, vb := reflect.Indirect(reflect.ValueOf(a)), reflect.Indirect(reflect.ValueOf(b))
	for _, f := range fields {
		if !structs.DeepEqual(va.FieldByName(f).Interface(), vb.FieldByName(f).Interface()) {
			return f
		}
	}
	return ""
}

// destructiveTaskFields are all Task fields except inPlaceTaskFields, so a
// field added to Task later is destructive until someone decides otherwise.
var destructiveTaskFields = func() []string {
	t := reflect.TypeOf(structs.Task{})
	out := make([]string, 0, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		if n := t.Field(i).Name; !inPlaceTaskFields[n] {
			out = append(out, n)
		}
	}
	return out
}()

// rollout is the placements of an evaluation once the destructive updates
// it starts are added.
type rollout struct {
	// places are the placements made before, then the replacements of
	// the destructive updates to make now.
	places []Placement
	// wait is the stagger before the next batch, when some were deferred
	// (zero when none were).
	wait     time.Duration
	deferred int
}

// planUpdates moves the kept allocs of older job versions to the current
// one: in place when only in-place fields changed, else by a destructive
// replacement, at most update.max_parallel of those in flight at a time.
// The replacements follow places, the placements the count made.
func planUpdates(in groupInput, keep []*holder, places []Placement, decided *decisions) rollout {
	var candidates []*holder
	inflight := 0
	compare := comparer(in.job, in.tg.Name)
	for _, h := range keep {
		if h.kind != holdRunning && h.kind != holdFailed {
			continue
		}
		a := decided.current(h.alloc)
		switch compare(a.Job) {
		case unchanged:
			if a.ClientStatus == structs.AllocClientStatusPending && a.PreviousAllocation != "" {
				inflight++
			}
		case inPlace:
			if h.kind == holdRunning {
				decided.rewrite(a, UpdateInPlace, func(c *structs.Allocation) { c.Job = in.job })
			}
		case destructive:
			candidates = append(candidates, h)
		}
	}
	out := rollout{places: places}
	limit := len(candidates)
	if u := in.tg.Update; !in.batch && u.Rolling() {
		limit = max(min(limit, u.MaxParallel-inflight), 0)
		if limit < len(candidates) {
			out.wait = max(u.Stagger, time.Second)
			out.deferred = len(candidates) - limit
		}
	}
	for _, h := range candidates[:limit] {
		a := decided.current(h.alloc)
		out.places = append(out.places, Placement{
			Name: a.Name, TaskGroup: in.tg, Reason: PlaceDestructive, Previous: a,
			StopPrevious: &Stop{Alloc: a, Description: DescUpdated},
		})
	}
	return out
}
