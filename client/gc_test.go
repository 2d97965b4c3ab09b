package client

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/drover-sched/drover/client/config"
	"github.com/drover-sched/drover/structs"
)

func TestGCRemovesTerminalAllocDirsByCountThenAge(t *testing.T) {
	e := newEnv(t, time.Hour)
	c := e.start(func(cfg *config.Config) {
		cfg.GCMaxAllocs = 2
		cfg.GCAllocDirTTL = 3 * time.Hour
		cfg.GCDiskUsageThreshold = 100 // the test machine's disk is not the subject
		cfg.GCInodeUsageThreshold = 100
	})
	var ids []string
	for i := 0; i < 3; i++ {
		a := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeBatch, mockTask(map[string]any{"run_for": "1s"}))))
		e.waitServerStatus(a.ID, structs.AllocClientStatusComplete)
		ids = append(ids, a.ID)
		e.waitFor("the alloc to become GC eligible", func() bool {
			for _, id := range c.gc.Eligible() {
				if id == a.ID {
					return true
				}
			}
			return false
		})
		if i == 1 {
			// Two finished allocs, within the limit: both kept, logs readable.
			r, err := c.AllocLogs(ids[0], "web", "stdout", "start", 0, false)
			if err != nil {
				t.Fatalf("logs of a finished alloc should stay readable until GC: %v", err)
			}
			r.Close()
		}
		e.clk.Advance(time.Minute) // distinct terminal times, oldest first
	}
	// The third alloc made three, over gc_max_allocs 2: the oldest goes, on
	// the pass its arrival triggered or the next periodic one.
	e.waitFor("the oldest to be collected", func() bool {
		e.clk.Advance(10 * time.Minute)
		return c.runner(ids[0]) == nil
	})
	if c.runner(ids[1]) == nil || c.runner(ids[2]) == nil {
		t.Fatal("only the oldest alloc should go for the count limit")
	}
	if _, err := os.Stat(filepath.Join(e.dir, "alloc", ids[0])); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the collected alloc's directory is still there: %v", err)
	}
	if _, err := c.AllocLogs(ids[0], "web", "stdout", "start", 0, false); !errors.Is(err, ErrUnknownAlloc) {
		t.Fatalf("a collected alloc's logs are gone, got %v", err)
	}
	// Past the TTL, the rest go too.
	e.waitFor("the rest to expire", func() bool {
		e.clk.Advance(10 * time.Minute)
		return c.runner(ids[1]) == nil && c.runner(ids[2]) == nil
	})
	for _, id := range ids {
		if c.runner(id) != nil {
			t.Fatalf("alloc %s still present", id)
		}
	}
}

// Once the servers have collected a finished alloc (it leaves the
// assignment), the client removes its directory at once: not on the next
// GC interval (an hour here), nor when a count, age or disk limit is hit.
func TestGCRemovesAnAllocDirPromptlyOnceTheServersCollectedIt(t *testing.T) {
	e := newEnv(t, time.Hour)
	c := e.start(func(cfg *config.Config) {
		cfg.GCInterval = time.Hour
		cfg.GCMaxAllocs = 50
		cfg.GCAllocDirTTL = 0
		cfg.GCDiskUsageThreshold = 100
		cfg.GCInodeUsageThreshold = 100
	})
	done := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeBatch, mockTask(map[string]any{"run_for": "1s"}))))
	kept := e.fs.UpsertAlloc(allocFor(c.NodeID(), job(structs.JobTypeBatch, mockTask(map[string]any{"run_for": "1s"}))))
	for _, a := range []*structs.Allocation{done, kept} {
		e.waitServerStatus(a.ID, structs.AllocClientStatusComplete)
		e.waitFor("the alloc to become GC eligible", func() bool { return slices.Contains(c.gc.Eligible(), a.ID) })
	}
	dir := filepath.Join(e.dir, "alloc", done.ID)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("a finished alloc's directory must stay while the servers keep it: %v", err)
	}

	start := e.clk.Now()
	e.fs.RemoveAlloc(done.ID)
	e.waitFor("the collected alloc to be destroyed", func() bool { return c.runner(done.ID) == nil })
	if waited := e.clk.Now().Sub(start); waited >= time.Hour {
		t.Fatalf("the directory went only after %s, on a GC pass; want at once", waited)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the collected alloc's directory is still there: %v", err)
	}
	if c.runner(kept.ID) == nil {
		t.Fatal("an alloc the servers still keep was destroyed")
	}
	if _, err := os.Stat(filepath.Join(e.dir, "alloc", kept.ID)); err != nil {
		t.Fatalf("the kept alloc's directory is gone: %v", err)
	}
}
