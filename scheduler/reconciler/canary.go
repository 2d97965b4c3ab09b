package reconciler

// Canaries (update.canary = N): a destructive change first places N allocs
// of the new version next to the old ones, which keep every slot. Until the
// group is promoted (DeploymentState.Promoted) the canaries hold no slot and
// nothing else of the new version is placed. Once promoted, each canary
// takes the slot of the old alloc of its name, and the rest of the old
// allocs roll with max_parallel like any destructive update.

// splitCanaries takes the canaries of the current deployment out of the
// slot holders while the group waits for their promotion: they run beside
// the group's Count. A canary that failed or was lost is still a canary
// holder, and its replacement is placed as a canary. Canaries of a
// deployment that failed or was cancelled before promotion are stopped:
// the version they try out is not going ahead.
func splitCanaries(in groupInput, holders []*holder, decided *decisions) (slots, canaries []*holder) {
	r := in.rollout
	if !r.canarying() {
		return holders, nil
	}
	for _, h := range holders {
		if !r.isCanary(h.alloc) {
			slots = append(slots, h)
			continue
		}
		if r.halted && !r.active {
			if h.origin != Lost && h.origin != Expired {
				decided.stop(h.alloc, DescCanaryDeployment, false)
			}
			continue
		}
		canaries = append(canaries, h)
	}
	return slots, canaries
}

// retireForCanaries gives the slot of each promoted canary's namesake of
// an older version to the canary: the old alloc is stopped now, as the
// canary already runs the new version in its place. Without this, the
// count would see two holders of one name and might give up the canary.
func retireForCanaries(in groupInput, holders []*holder, decided *decisions) []*holder {
	r := in.rollout
	if !r.promoted() {
		return holders
	}
	canaryNames := map[int]bool{}
	for _, h := range holders {
		if r.isCanary(h.alloc) {
			canaryNames[h.index] = true
		}
	}
	if len(canaryNames) == 0 {
		return holders
	}
	var out []*holder
	for _, h := range holders {
		a := decided.current(h.alloc)
		outdated := a.Job == nil || !sameVersion(a.Job, in.job)
		if canaryNames[h.index] && outdated && h.kind == holdRunning {
			decided.stop(h.alloc, DescCanaryPromoted, false)
			delete(canaryNames, h.index)
			continue
		}
		out = append(out, h)
	}
	return out
}

// canaryPlacements are the canaries to place now: the replacements of
// canaries that failed or were lost (a rescheduled canary stays a canary),
// then new canaries up to update.canary, named after the older allocs
// they try to replace (lowest name first). A halted deployment places no
// new canary.
func canaryPlacements(in groupInput, out rollout, candidates, canaries []*holder) []Placement {
	var places []Placement
	used := map[string]bool{}
	for _, h := range canaries {
		used[h.alloc.Name] = true
		if h.place != nil {
			p := *h.place
			p.Name, p.TaskGroup, p.Canary = h.alloc.Name, in.tg, true
			places = append(places, p)
		}
	}
	if !out.canarying || in.rollout.halted {
		return places
	}
	need := out.canaries - len(canaries)
	for _, h := range candidates {
		if need <= 0 {
			break
		}
		if used[h.alloc.Name] {
			continue
		}
		used[h.alloc.Name] = true
		places = append(places, Placement{Name: h.alloc.Name, TaskGroup: in.tg, Reason: PlaceCanary, Canary: true})
		need--
	}
	for i := 0; need > 0; i++ {
		name := allocName(in.job, in.tg.Name, i)
		if used[name] {
			continue
		}
		used[name] = true
		places = append(places, Placement{Name: name, TaskGroup: in.tg, Reason: PlaceCanary, Canary: true})
		need--
	}
	return places
}
