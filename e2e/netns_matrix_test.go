//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// partitionCase is one job of the partitioned reconnect matrix, with what it
// must look like once its client is back.
type partitionCase struct {
	id    string
	group string
	m     taskMarker
	// job, when set, is the job's HCL (else serviceJob with group).
	job string
	// settled says whether the job has reached its final shape after the
	// heal; orig and repl are its original and (if any) its replacement.
	settled func(allocs []*api.Allocation) (bool, string)

	orig, repl *api.Allocation
	origPid    int
	replPid    int
}

func disconnectGroup(reconcile string, replace bool) string {
	return fmt.Sprintf(`
    disconnect {
      lost_after = "5m"
      replace    = %t
      reconcile  = %q
    }`, replace, reconcile)
}

// The reconnect matrix with the disconnect made by a real partition:
// disconnect.reconcile in {keep_original, keep_replacement, best_score,
// longest_running} x replace in {true, false}, one job each, plus a
// system job, a job holding a static port and a job given a new version
// while its client is away, all on one client ("away") that is cut from
// the server while everything keeps running, and healed. After the heal:
// exactly count (one) alloc and one process per job; AllocStates
// [unknown, running] on a kept original; the loser's process gone; a job
// that does not replace never had a second alloc; the system job runs
// once per node; the static port is still held on the returned node (a
// job wanting it there is not placed until the holder stops); the job
// changed while away runs its new version only.
//
// The cases share one cluster and one partition, so they run at once.
func TestNetnsReconnectMatrix(t *testing.T) {
	elapsed(t)
	c := startNetnsCluster(t, netnsClusterSpec{servers: 1, clients: []string{"away"}})
	s := c.servers[0]

	var cases []*partitionCase
	for _, rec := range []string{"keep_original", "keep_replacement", "best_score", "longest_running"} {
		for _, replace := range []bool{true, false} {
			mc := &partitionCase{id: fmt.Sprintf("m-%s-%t", strings.ReplaceAll(rec, "_", "-"), replace), group: disconnectGroup(rec, replace), m: newTaskMarker(t)}
			mc.settled = matrixSettled(mc, rec, replace)
			cases = append(cases, mc)
		}
	}
	sys := &partitionCase{id: "sys", m: newTaskMarker(t)}
	sys.job = strings.Replace(serviceJob("sys", sys.m, disconnectGroup("keep_original", true)), `type        = "service"`, `type        = "system"`, 1)
	port := &partitionCase{id: "port", m: newTaskMarker(t), group: disconnectGroup("keep_original", true) + staticPortBlock}
	ver := &partitionCase{id: "ver", m: newTaskMarker(t), group: disconnectGroup("keep_original", true)}
	port.settled = matrixSettled(port, "keep_original", true)
	cases = append(cases, sys, port, ver)

	// Every job starts on "away", the only client; the spare joins after.
	for _, mc := range cases {
		job := mc.job
		if job == "" {
			job = serviceJob(mc.id, mc.m, mc.group)
		}
		registerJob(t, s, job, 10*time.Second)
	}
	for _, mc := range cases {
		mc.orig, mc.origPid = waitForFirstAlloc(t, s, mc.id, mc.m)
	}
	c.startClient("spare")
	waitForReadyNodes(t, s, "away", "spare")
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "sys")
		if err != nil {
			return false, err.Error()
		}
		return len(runningAllocs(allocs)) == 2 && len(sys.m.procs()) == 2, "sys: " + describeAllocs(allocs)
	})

	away := c.nodes["away"]
	cutAt := time.Now()
	away.cut()
	waitFor(t, 60*time.Second, func() (bool, string) {
		if st := nodeStatus(s, "away"); st != "disconnected" {
			return false, "away is " + st
		}
		for _, mc := range cases {
			allocs, err := jobAllocs(s, mc.id)
			if err != nil {
				return false, err.Error()
			}
			mc.repl = nil
			for _, a := range allocs {
				switch {
				case a.ID == mc.orig.ID && a.ClientStatus != "unknown":
					return false, fmt.Sprintf("%s: original is %s", mc.id, a.ClientStatus)
				case a.ID != mc.orig.ID && a.NodeName == "away":
					return false, fmt.Sprintf("%s: placed on the cut node: %s", mc.id, describeAllocs(allocs))
				case a.ID != mc.orig.ID && a.DesiredStatus == "run" && a.ClientStatus == "running" && mc.m.procs()[a.ID] != 0:
					mc.repl = a
				}
			}
			wantRepl := mc.id == "sys" || !strings.HasSuffix(mc.id, "-false")
			if wantRepl && mc.repl == nil {
				return false, fmt.Sprintf("%s: no replacement running: %s", mc.id, describeAllocs(allocs))
			}
			if !wantRepl && len(allocs) != 1 {
				return false, fmt.Sprintf("%s does not replace, yet has %d allocs: %s", mc.id, len(allocs), describeAllocs(allocs))
			}
			if mc.m.procs()[mc.orig.ID] != mc.origPid {
				return false, fmt.Sprintf("%s: the original's task (pid %d) must keep running on the cut node: %v", mc.id, mc.origPid, mc.m.procs())
			}
		}
		return true, ""
	})
	t.Logf("away disconnected, every original unknown and the replacements running %s after the cut", time.Since(cutAt).Round(time.Millisecond))
	for _, mc := range cases {
		if mc.repl != nil {
			mc.replPid = mc.m.procs()[mc.repl.ID]
		}
	}

	// A new version of "ver" while its original's client is away: its
	// running replacement is replaced by the new version.
	verJob := strings.Replace(serviceJob("ver", ver.m, ver.group), "memory = 32", "memory = 33", 1)
	registerJob(t, s, verJob, 10*time.Second)
	latest := func() uint64 {
		j, _, err := s.api().Jobs().Info("ver", nil)
		if err != nil || j.Version == nil {
			return 0
		}
		return *j.Version
	}
	var verNew *api.Allocation
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "ver")
		if err != nil {
			return false, err.Error()
		}
		v := latest()
		for _, a := range runningAllocs(allocs) {
			if a.Job != nil && a.Job.Version != nil && *a.Job.Version == v && v > 0 && ver.m.procs()[a.ID] != 0 {
				verNew = a
				return true, ""
			}
		}
		return false, fmt.Sprintf("ver: no alloc of version %d running: %s", v, describeAllocs(allocs))
	})
	ver.settled = func(allocs []*api.Allocation) (bool, string) {
		r := runningAllocs(allocs)
		if len(r) != 1 || r[0].Job == nil || r[0].Job.Version == nil || *r[0].Job.Version != latest() {
			return false, "want one alloc of the latest version running"
		}
		p := ver.m.procs()
		return len(p) == 1 && p[r[0].ID] != 0, fmt.Sprintf("processes %v", p)
	}
	sys.settled = func(allocs []*api.Allocation) (bool, string) {
		r := runningAllocs(allocs)
		perNode := map[string]int{}
		for _, a := range r {
			perNode[a.NodeName]++
		}
		if len(r) != 2 || perNode["away"] != 1 || perNode["spare"] != 1 {
			return false, "want one running per node"
		}
		p := sys.m.procs()
		if len(p) != 2 {
			return false, fmt.Sprintf("processes %v", p)
		}
		for _, a := range r {
			if a.NodeName == "away" && a.ID != sys.orig.ID {
				return false, "the system alloc on away was replaced, not reconnected"
			}
			if p[a.ID] == 0 {
				return false, fmt.Sprintf("running alloc %s has no process", a.ID[:8])
			}
		}
		return p[sys.orig.ID] == sys.origPid, "the original system task was restarted"
	}

	healAt := time.Now()
	away.heal()
	var mu sync.Mutex
	settledAt := map[string]time.Duration{}
	var wg sync.WaitGroup
	for _, mc := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(90 * time.Second)
			for time.Now().Before(deadline) {
				allocs, err := jobAllocs(s, mc.id)
				if err == nil {
					if ok, _ := mc.settled(allocs); ok {
						mu.Lock()
						settledAt[mc.id] = time.Since(healAt)
						mu.Unlock()
						return
					}
				}
				select {
				case <-time.After(100 * time.Millisecond):
				case <-t.Context().Done():
					return
				}
			}
		}()
	}
	wg.Wait()
	var report []string
	for _, mc := range cases {
		d, ok := settledAt[mc.id]
		if !ok {
			allocs, _ := jobAllocs(s, mc.id)
			_, why := mc.settled(allocs)
			t.Errorf("%s did not settle within 90s of the heal: %s; %s; evals %s", mc.id, why, describeAllocs(allocs), describeEvals(s, mc.id))
			continue
		}
		report = append(report, fmt.Sprintf("%s %s", mc.id, d.Round(time.Millisecond)))
	}
	if t.Failed() {
		t.FailNow()
	}
	sort.Strings(report)
	t.Logf("settled after the heal: %s", strings.Join(report, ", "))

	// Once every eval has run, each case still has its final shape.
	for _, mc := range cases {
		waitForEvalsDone(t, s, mc.id)
	}
	for _, mc := range cases {
		allocs, err := jobAllocs(s, mc.id)
		if err != nil {
			t.Fatal(err)
		}
		if ok, why := mc.settled(allocs); !ok {
			t.Errorf("%s after every eval finished: %s: %s", mc.id, why, describeAllocs(allocs))
		}
	}
	for _, mc := range cases[:8] {
		if strings.Contains(mc.id, "best-score-true") {
			allocs, _ := jobAllocs(s, mc.id)
			if r := runningAllocs(allocs); len(r) == 1 {
				t.Logf("%s kept the original: %v", mc.id, r[0].ID == mc.orig.ID)
			}
		}
	}
	if verNew != nil {
		t.Logf("ver: version %d placed at %s while away, kept after the heal", latest(), verNew.ID[:8])
	}

	// The static port is held by the reconnected original on away: a job
	// that wants the same port there is not placed until it stops.
	blocked := pinnedServiceJob("port2", port.m, staticPortBlock, "away")
	registerJob(t, s, blocked, 10*time.Second)
	waitFor(t, 30*time.Second, func() (bool, string) {
		evals, _, err := s.api().Jobs().Evaluations("port2", nil)
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evals {
			if e.Status == "blocked" {
				return true, ""
			}
		}
		return false, "port2 has no blocked eval: " + describeEvals(s, "port2")
	})
	if allocs, _ := jobAllocs(s, "port2"); len(allocs) != 0 {
		t.Fatalf("port2 was placed on away although the reconnected original holds its static port: %s", describeAllocs(allocs))
	}
	if _, _, err := s.api().Jobs().Deregister("port", false, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		allocs, err := jobAllocs(s, "port2")
		if err != nil {
			return false, err.Error()
		}
		r := runningAllocs(allocs)
		return len(r) == 1 && r[0].NodeName == "away", "port2 after port stopped: " + describeAllocs(allocs)
	})
}

// staticPortBlock asks for static port 23456 on the node.
const staticPortBlock = `
    network {
      port "http" {
        static = 23456
      }
    }`

// matrixSettled is the final shape of a service case: which alloc
// survives depends on the reconcile policy and on whether a replacement
// was placed at all.
func matrixSettled(mc *partitionCase, reconcile string, replace bool) func([]*api.Allocation) (bool, string) {
	return func(allocs []*api.Allocation) (bool, string) {
		r := runningAllocs(allocs)
		if len(r) != 1 {
			return false, fmt.Sprintf("%d running", len(r))
		}
		kept := r[0]
		var want *api.Allocation
		switch {
		case !replace:
			want = mc.orig
			if len(allocs) != 1 {
				return false, fmt.Sprintf("does not replace, yet has %d allocs", len(allocs))
			}
		case reconcile == "keep_replacement":
			want = mc.repl
		case reconcile == "best_score":
			if kept.ID != mc.orig.ID && (mc.repl == nil || kept.ID != mc.repl.ID) {
				return false, "a third alloc runs"
			}
			want = kept
		default: // keep_original; longest_running: the original ran longer
			want = mc.orig
		}
		if want == nil || kept.ID != want.ID {
			return false, "the wrong alloc was kept"
		}
		p := mc.m.procs()
		if len(p) != 1 || p[kept.ID] == 0 {
			return false, fmt.Sprintf("want the kept alloc's process alone: %v", p)
		}
		for _, a := range allocs {
			if a.ID != kept.ID && (a.DesiredStatus == "run" || !a.ClientTerminalStatus()) {
				return false, "the loser is not stopped and reported"
			}
		}
		if kept.ID == mc.orig.ID {
			if p[kept.ID] != mc.origPid {
				return false, "the kept original's task was restarted"
			}
			if !unknownThenRunning(kept) {
				return false, "the kept original's AllocStates lack [unknown, running]"
			}
		} else if p[kept.ID] != mc.replPid {
			return false, "the kept replacement's task was restarted"
		}
		return true, ""
	}
}
