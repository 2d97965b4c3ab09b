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
	// candidates are the allocs of older versions that need a
	// destructive update, placed now or deferred.
	candidates int
	// canarying: the group waits for its canaries to be promoted.
	canarying bool
	// canaries is how many canaries the group wants (its update.canary),
	// when this version's rollout uses them.
	canaries int
}

// planUpdates moves the kept allocs of older job versions to the current
// one: in place when only in-place fields changed, else by a destructive
// replacement. Under a rolling update block the destructive replacements
// are paced by the deployment: at most update.max_parallel new-version
// allocs placed and not yet healthy at a time, none while an unhealthy one
// stops progress, none while the deployment is paused, failed or
// cancelled, and none while canaries await promotion (update.canary places
// them first). The replacements follow places, the placements the count
// made; canaries and the replacements of canaries come last.
func planUpdates(in groupInput, keep, canaries []*holder, places []Placement, decided *decisions) rollout {
	var candidates []*holder
	inflight, stalled := 0, false
	compare := comparer(in.job, in.tg.Name)
	r := in.rollout
	for _, h := range keep {
		if h.kind != holdRunning && h.kind != holdFailed {
			continue
		}
		a := decided.current(h.alloc)
		switch compare(a.Job) {
		case unchanged:
			switch r.healthOf(a) {
			case waiting:
				inflight++
			case unhealthy:
				stalled = true
			}
		case inPlace:
			if h.kind == holdRunning {
				decided.rewrite(a, UpdateInPlace, func(c *structs.Allocation) { c.Job = in.job })
			}
		case destructive:
			candidates = append(candidates, h)
		}
	}
	out := rollout{candidates: len(candidates)}
	u := in.tg.Update
	rolling := !in.batch && u.Rolling()
	if rolling && u.Canary > 0 && !r.promoted() && (len(candidates) > 0 || r.canarying()) {
		out.canaries = u.Canary
		out.canarying = true
	}
	// A halted deployment, or one waiting for its canaries, places no new
	// allocs of the version; replacements of lost, failed, disconnected or
	// migrating allocs still go ahead, so the job keeps its count.
	if rolling && (r.halted || out.canarying) {
		places = withoutNew(places)
	}
	out.places = places
	limit := len(candidates)
	if rolling {
		budget := u.MaxParallel - inflight
		if r.halted || stalled || out.canarying {
			budget = 0
		}
		limit = max(min(limit, budget), 0)
		if limit < len(candidates) {
			out.deferred = len(candidates) - limit
			// Only a rollout that waits on nothing but time or health
			// checks again after a stagger; a halted one waits for the
			// operator or the deployment watcher, whose action makes an
			// eval of its own.
			if !r.halted && !out.canarying {
				out.wait = max(u.Stagger, time.Second)
			}
		}
	}
	for _, h := range candidates[:limit] {
		a := decided.current(h.alloc)
		out.places = append(out.places, Placement{
			Name: a.Name, TaskGroup: in.tg, Reason: PlaceDestructive, Previous: a,
			StopPrevious: &Stop{Alloc: a, Description: DescUpdated},
		})
	}
	out.places = append(out.places, canaryPlacements(in, out, candidates, canaries)...)
	return out
}

// withoutNew drops the placements that fill free slots (first run, scale
// up), keeping the replacements of existing allocs.
func withoutNew(places []Placement) []Placement {
	var out []Placement
	for _, p := range places {
		if p.Reason != PlaceNew {
			out = append(out, p)
		}
	}
	return out
}
