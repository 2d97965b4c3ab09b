//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// matrixCount is each matrix job's count: more than one, so a cell also
// checks that every original is paired with its own replacement.
const matrixCount = 2

// matrixCase is one cell of the frozen half of the reconnect matrix: a
// job whose group has this disconnect block.
type matrixCase struct {
	reconcile string
	replace   bool
}

func (mc matrixCase) jobID() string { return fmt.Sprintf("m-%s-%t", mc.reconcile, mc.replace) }

func (mc matrixCase) group() string {
	return fmt.Sprintf(`
    disconnect {
      lost_after = "5m"
      reconcile  = %q
      replace    = %t
    }`, mc.reconcile, mc.replace)
}

// matrixCell is what the test saw of one case while the agent was frozen.
type matrixCell struct {
	matrixCase
	m     taskMarker // this cell's task processes only
	origs []*api.Allocation
	repl  map[string]*api.Allocation // original ID -> its replacement
	pids  map[string]int             // alloc ID -> task pid, before the thaw
	keep  map[string]bool            // alloc IDs that must survive the thaw
}

// The frozen half of the matrix: disconnect.reconcile in {keep_original,
// keep_replacement, best_score, longest_running} x replace in {true, false},
// one job (count 2) per cell, all eight in one inner datacenter. Every
// original runs on inner agent A; B joins afterwards, so replacements can
// only go to B. A is frozen with `alloc signal -s SIGSTOP` on its outer
// alloc: its node goes disconnected, every original becomes unknown while
// its process keeps running, replace = true cells get one running
// replacement per original on B (PreviousAllocation names the original) and
// replace = false cells get none. After `alloc signal -s SIGCONT` each job
// has exactly count live allocs and count processes, one of each pair: the
// original for keep_original, longest_running (it started first) and every
// replace = false cell; the replacement for keep_replacement; for
// best_score the one whose placement scored higher (ties keep the
// original). A kept original records [unknown, running] in AllocStates;
// each loser is stopped, its client reports it terminal and its process is
// gone.
func TestNestedFrozenMatrix(t *testing.T) {
	start := time.Now()
	c := startNestedCluster(t)
	a := c.startInner(innerSpec{name: "matrix-a"})
	dumpOnFailure(t, a)
	s := c.server

	var cells []*matrixCell
	for _, reconcile := range []string{"keep_original", "keep_replacement", "best_score", "longest_running"} {
		for _, replace := range []bool{true, false} {
			mc := matrixCase{reconcile: reconcile, replace: replace}
			cell := &matrixCell{matrixCase: mc, m: newTaskMarker(t), pids: map[string]int{}, keep: map[string]bool{}}
			cells = append(cells, cell)
			job := strings.Replace(nestedJob(mc.jobID(), c.dc, cell.m, mc.group()), "count = 1", fmt.Sprintf("count = %d", matrixCount), 1)
			registerJob(t, s, job, 10*time.Second)
		}
	}
	for _, cell := range cells {
		cell.origs = waitForRunningWork(t, s, cell.jobID(), cell.m, matrixCount)
		for _, o := range cell.origs {
			cell.pids[o.ID] = cell.m.procs()[o.ID]
		}
	}
	b := c.startInner(innerSpec{name: "matrix-b"})
	dumpOnFailure(t, b)
	aID := a.nodeID()
	for _, cell := range cells {
		for _, o := range cell.origs {
			if o.NodeID != aID {
				t.Fatalf("%s: original %s runs on %s, want inner agent A", cell.jobID(), o.ID[:8], o.NodeName)
			}
		}
	}
	t.Logf("%d originals running on A after %s", len(cells)*matrixCount, time.Since(start).Round(time.Millisecond))

	frozenAt := time.Now()
	thaw := a.freeze()
	waitFor(t, 30*time.Second, func() (bool, string) {
		if st := a.status(); st != "disconnected" {
			return false, "frozen inner node is " + st
		}
		for _, cell := range cells {
			if ok, why := cell.disconnected(s); !ok {
				return false, cell.jobID() + ": " + why
			}
		}
		return true, ""
	})
	t.Logf("disconnected and replaced %s after the freeze", time.Since(frozenAt).Round(time.Millisecond))
	for _, cell := range cells {
		waitForEvalsDone(t, s, cell.jobID())
		allocs, err := jobAllocs(s, cell.jobID())
		if err != nil {
			t.Fatal(err)
		}
		want := matrixCount
		if cell.replace {
			want *= 2
		}
		if len(allocs) != want {
			t.Fatalf("%s: while A is frozen want %d allocs, have %s", cell.jobID(), want, describeAllocs(allocs))
		}
		procs := cell.m.procs()
		for _, o := range cell.origs {
			if procs[o.ID] != cell.pids[o.ID] {
				t.Fatalf("%s: the frozen agent's task (pid %d) must keep running, have %v", cell.jobID(), cell.pids[o.ID], procs)
			}
			r := cell.repl[o.ID]
			if r == nil {
				cell.keep[o.ID] = true
				continue
			}
			if r.NodeID == aID {
				t.Fatalf("%s: replacement %s placed on the disconnected node", cell.jobID(), r.ID[:8])
			}
			cell.pids[r.ID] = procs[r.ID]
			if keepsOriginal(cell.reconcile, o, r) {
				cell.keep[o.ID] = true
			} else {
				cell.keep[r.ID] = true
			}
		}
	}

	thawedAt := time.Now()
	thaw()
	waitFor(t, 30*time.Second, func() (bool, string) {
		st := a.status()
		return st == "ready", "thawed inner node is " + st
	})
	// The cells only read the servers' state: check them side by side.
	t.Run("settled", func(t *testing.T) {
		for _, cell := range cells {
			cell := cell
			t.Run(cell.jobID(), func(t *testing.T) {
				t.Parallel()
				cell.checkSettled(t, s)
			})
		}
	})
	t.Logf("all cells settled %s after the thaw; scenario took %s", time.Since(thawedAt).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// waitForRunningWork waits until the job has exactly n allocs, all running
// with a task process, and returns them.
func waitForRunningWork(t *testing.T, s *agent, jobID string, m taskMarker, n int) []*api.Allocation {
	t.Helper()
	var allocs []*api.Allocation
	waitFor(t, 30*time.Second, func() (bool, string) {
		var err error
		if allocs, err = jobAllocs(s, jobID); err != nil {
			return false, err.Error()
		}
		if len(allocs) != n || len(runningAllocs(allocs)) != n {
			return false, describeAllocs(allocs)
		}
		procs := m.procs()
		for _, a := range allocs {
			if procs[a.ID] == 0 {
				return false, "no process for alloc " + a.ID[:8]
			}
		}
		return true, ""
	})
	return allocs
}

// disconnected checks the cell while A is frozen: every original unknown,
// and for replace = true each one's replacement running with a process.
func (cell *matrixCell) disconnected(s *agent) (bool, string) {
	allocs, err := jobAllocs(s, cell.jobID())
	if err != nil {
		return false, err.Error()
	}
	byID := map[string]*api.Allocation{}
	for _, al := range allocs {
		byID[al.ID] = al
	}
	cell.repl = map[string]*api.Allocation{}
	procs := cell.m.procs()
	for _, o := range cell.origs {
		if st := byID[o.ID].ClientStatus; st != "unknown" {
			return false, fmt.Sprintf("original %s is %s", o.ID[:8], st)
		}
		for _, al := range allocs {
			if al.PreviousAllocation == o.ID && al.DesiredStatus == "run" && al.ClientStatus == "running" && procs[al.ID] != 0 {
				cell.repl[o.ID] = al
			}
		}
		if cell.replace && cell.repl[o.ID] == nil {
			return false, fmt.Sprintf("no running replacement for %s: %s", o.ID[:8], describeAllocs(allocs))
		}
	}
	return true, ""
}

// keepsOriginal says which of a pair the policy must keep.
func keepsOriginal(reconcile string, orig, repl *api.Allocation) bool {
	switch reconcile {
	case "keep_replacement":
		return false
	case "best_score":
		return placementScore(orig) >= placementScore(repl)
	}
	return true
}

// placementScore is the normalized score the alloc's node got when it was
// placed.
func placementScore(a *api.Allocation) float64 {
	if a.Metrics == nil {
		return 0
	}
	for _, sm := range a.Metrics.ScoreMetaData {
		if sm != nil && sm.NodeID == a.NodeID {
			return sm.NormScore
		}
	}
	return 0
}

// checkSettled waits until exactly the kept allocs run, with the processes
// they had before the thaw and no other, every loser stopped and terminal,
// and checks it still holds once every eval is done.
func (cell *matrixCell) checkSettled(t *testing.T, s *agent) {
	check := func() (bool, string) {
		allocs, err := jobAllocs(s, cell.jobID())
		if err != nil {
			return false, err.Error()
		}
		var running []string
		for _, al := range runningAllocs(allocs) {
			running = append(running, al.ID)
		}
		if len(running) != len(cell.keep) {
			return false, fmt.Sprintf("want %d running, have %s", len(cell.keep), describeAllocs(allocs))
		}
		for _, id := range running {
			if !cell.keep[id] {
				return false, fmt.Sprintf("%s runs and should not: %s", id[:8], describeAllocs(allocs))
			}
		}
		for _, al := range allocs {
			if !cell.keep[al.ID] && (al.DesiredStatus == "run" || !al.ClientTerminalStatus()) {
				return false, fmt.Sprintf("loser %s is desired=%s client=%s", al.ID[:8], al.DesiredStatus, al.ClientStatus)
			}
		}
		procs := cell.m.procs()
		if len(procs) != len(cell.keep) {
			return false, fmt.Sprintf("want %d task processes, have %v", len(cell.keep), procs)
		}
		for id := range cell.keep {
			if procs[id] != cell.pids[id] {
				return false, fmt.Sprintf("kept %s should keep pid %d, have %v", id[:8], cell.pids[id], procs)
			}
		}
		return true, ""
	}
	waitForStable(t, 30*time.Second, 2*time.Second, check)
	waitForEvalsDone(t, s, cell.jobID())
	if ok, why := check(); !ok {
		t.Fatalf("after every eval finished: %s", why)
	}
	allocs, err := jobAllocs(s, cell.jobID())
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, al := range allocs {
		if !cell.keep[al.ID] {
			continue
		}
		original := al.PreviousAllocation == ""
		if original {
			assertUnknownThenRunning(t, al)
		}
		kept = append(kept, fmt.Sprintf("%s (original %t, score %.3f)", al.ID[:8], original, placementScore(al)))
	}
	sort.Strings(kept)
	t.Logf("kept %v", kept)
}
