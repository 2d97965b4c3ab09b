//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-sched/drover/api"
)

// matrixCase is one cell of the frozen half of the reconnect matrix: a
// count-1 job whose group has this disconnect block.
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
	m        taskMarker // this cell's task processes only
	orig     *api.Allocation
	origPid  int
	repl     *api.Allocation // nil when replace = false
	replPid  int
	wantOrig bool
}

// The frozen half of the matrix: disconnect.reconcile in {keep_original,
// keep_replacement, best_score, longest_running} x replace in {true, false},
// one job per cell, all eight in one inner datacenter. Every original runs
// on inner agent A; B joins afterwards, so replacements can only go to B.
// A is frozen with `alloc signal -s SIGSTOP` on its outer alloc: its node
// goes disconnected, every original becomes unknown while its process keeps
// running, replace = true cells get a running replacement on B and
// replace = false cells get none. After `alloc signal -s SIGCONT` each job
// has exactly one live alloc and one process: the original for
// keep_original, longest_running (it started first) and every replace =
// false cell; the replacement for keep_replacement; for best_score the one
// whose placement scored higher (ties keep the original). A kept original
// records [unknown, running] in AllocStates; the loser is stopped, its
// client reports it terminal and its process is gone.
func TestNestedFrozenMatrix(t *testing.T) {
	start := time.Now()
	c := startNestedCluster(t)
	dc := "nested-frozen-matrix"
	a := c.startInner(innerSpec{name: "matrix-a", dc: dc})
	dumpOnFailure(t, a)
	s := c.server

	var cells []*matrixCell
	for _, reconcile := range []string{"keep_original", "keep_replacement", "best_score", "longest_running"} {
		for _, replace := range []bool{true, false} {
			mc := matrixCase{reconcile: reconcile, replace: replace}
			cell := &matrixCell{matrixCase: mc, m: newTaskMarker(t)}
			cells = append(cells, cell)
			registerJob(t, s, nestedJob(mc.jobID(), dc, cell.m, mc.group()), 10*time.Second)
		}
	}
	for _, cell := range cells {
		cell.orig, cell.origPid = waitForFirstAlloc(t, s, cell.jobID(), cell.m)
	}
	b := c.startInner(innerSpec{name: "matrix-b", dc: dc})
	dumpOnFailure(t, b)
	aID := a.nodeID()
	t.Logf("8 originals running on %s after %s", aID[:8], time.Since(start).Round(time.Millisecond))

	frozenAt := time.Now()
	thaw := a.freeze()
	waitFor(t, 30*time.Second, func() (bool, string) {
		if st := a.status(); !hasSuffix(st, "disconnected") {
			return false, "frozen inner node is " + st
		}
		for _, cell := range cells {
			allocs, err := jobAllocs(s, cell.jobID())
			if err != nil {
				return false, err.Error()
			}
			cell.repl = nil
			for _, al := range allocs {
				if al.ID == cell.orig.ID && al.ClientStatus != "unknown" {
					return false, cell.jobID() + ": original is " + al.ClientStatus
				}
				if al.ID != cell.orig.ID && al.DesiredStatus == "run" && al.ClientStatus == "running" {
					cell.repl = al
				}
			}
			if cell.replace && (cell.repl == nil || cell.m.procs()[cell.repl.ID] == 0) {
				return false, cell.jobID() + ": no running replacement: " + describeAllocs(allocs)
			}
		}
		return true, ""
	})
	disconnected := time.Since(frozenAt)
	for _, cell := range cells {
		waitForEvalsDone(t, s, cell.jobID())
		allocs, err := jobAllocs(s, cell.jobID())
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if cell.replace {
			want = 2
		}
		if len(allocs) != want {
			t.Fatalf("%s: while A is frozen want %d allocs, have %s", cell.jobID(), want, describeAllocs(allocs))
		}
		if pid := cell.m.procs()[cell.orig.ID]; pid != cell.origPid {
			t.Fatalf("%s: the frozen agent's task (pid %d) must keep running, have pid %d", cell.jobID(), cell.origPid, pid)
		}
		if cell.repl != nil {
			if cell.repl.NodeID == aID {
				t.Fatalf("%s: replacement %s placed on the disconnected node", cell.jobID(), cell.repl.ID[:8])
			}
			cell.replPid = cell.m.procs()[cell.repl.ID]
		}
		cell.wantOrig = wantOriginal(cell)
	}
	t.Logf("disconnected and replaced %s after the freeze", disconnected.Round(time.Millisecond))

	thawedAt := time.Now()
	thaw()
	waitFor(t, 30*time.Second, func() (bool, string) {
		st := a.status()
		return hasSuffix(st, "ready"), "thawed inner node is " + st
	})
	for _, cell := range cells {
		cell := cell
		t.Run(cell.jobID(), func(t *testing.T) { checkMatrixCell(t, s, cell) })
	}
	t.Logf("all cells settled %s after the thaw; scenario took %s", time.Since(thawedAt).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// wantOriginal says which alloc the cell's policy must keep.
func wantOriginal(cell *matrixCell) bool {
	if cell.repl == nil {
		return true
	}
	switch cell.reconcile {
	case "keep_replacement":
		return false
	case "best_score":
		return placementScore(cell.orig) >= placementScore(cell.repl)
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

func checkMatrixCell(t *testing.T, s *agent, cell *matrixCell) {
	m := cell.m
	keep, keepPid, drop := cell.orig, cell.origPid, cell.repl
	if !cell.wantOrig {
		keep, keepPid, drop = cell.repl, cell.replPid, cell.orig
	}
	if drop != nil {
		waitFor(t, 30*time.Second, func() (bool, string) {
			d, _, err := s.api().Allocations().Info(drop.ID, nil)
			if err != nil {
				return false, err.Error()
			}
			if d.DesiredStatus == "run" || !d.ClientTerminalStatus() {
				return false, fmt.Sprintf("the loser %s is desired=%s client=%s", d.ID[:8], d.DesiredStatus, d.ClientStatus)
			}
			return m.procs()[drop.ID] == 0, "the loser's process is still alive"
		})
	}
	allocs := assertSoleWork(t, s, cell.jobID(), keep.ID, keepPid, m)
	for _, al := range allocs {
		if al.ID == cell.orig.ID && cell.wantOrig {
			assertUnknownThenRunning(t, al)
		}
	}
	t.Logf("kept %s (original: %t, scores orig %.3f repl %.3f)", keep.ID[:8], cell.wantOrig, placementScore(cell.orig), replScore(cell))
}

func replScore(cell *matrixCell) float64 {
	if cell.repl == nil {
		return 0
	}
	return placementScore(cell.repl)
}

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}
