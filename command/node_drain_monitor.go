package command

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/drover-sched/drover/api"
)

// drainMonitor follows a node drain: the node (its drain strategy goes
// away when every allocation has been told to migrate) and its allocations
// (each moves from run to stop, then its client reports it stopped). Both
// are watched with blocking queries, one goroutine each, feeding one loop
// that owns all printing state. The goroutines are started and waited for
// by run.
type drainMonitor struct {
	m       *Meta
	client  *api.Client
	nodeID  string
	verbose bool
	mon     *monitor

	// seen is the last state reported per allocation.
	seen map[string]allocSeen
}

type allocSeen struct {
	desired, client string
	migrate         bool
}

type drainUpdate struct {
	node       *api.Node
	allocs     []*api.Allocation
	fromAllocs bool
	index      uint64
	err        error
}

func newDrainMonitor(m *Meta, client *api.Client, nodeID string, verbose bool) *drainMonitor {
	return &drainMonitor{m: m, client: client, nodeID: nodeID, verbose: verbose,
		mon: newMonitor(m, client, verbose), seen: map[string]allocSeen{}}
}

func (d *drainMonitor) run() int {
	ctx, cancel := context.WithCancel(d.m.ctx)
	updates := make(chan drainUpdate)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	watch := func(read func(q *api.QueryOptions) (drainUpdate, *api.QueryMeta)) {
		defer wg.Done()
		var index uint64
		for ctx.Err() == nil {
			u, qm := read((&api.QueryOptions{WaitIndex: index, WaitTime: monitorWait}).WithContext(ctx))
			if qm != nil {
				u.index = qm.LastIndex
			}
			select {
			case updates <- u:
			case <-ctx.Done():
				return
			}
			if u.err != nil {
				return
			}
			index, _ = d.mon.nextIndex(index, qm)
		}
	}
	wg.Add(2)
	go watch(func(q *api.QueryOptions) (drainUpdate, *api.QueryMeta) {
		n, qm, err := d.client.Nodes().Info(d.nodeID, q)
		return drainUpdate{node: n, err: err}, qm
	})
	go watch(func(q *api.QueryOptions) (drainUpdate, *api.QueryMeta) {
		a, qm, err := d.client.Nodes().Allocations(d.nodeID, q)
		return drainUpdate{allocs: a, fromAllocs: true, err: err}, qm
	})

	d.mon.info("Monitoring node %q: Ctrl-C to detach monitoring", shortID(d.nodeID, d.verbose))
	var (
		node         *api.Node
		allocs       []*api.Allocation
		haveAllocs   bool
		drainDoneMsg bool

		// status is how the drain ended; strategy the last one seen,
		// for the progress line.
		status     string
		strategy   *api.DrainStrategy
		lastCounts string

		// The two watchers see the state at different raft indexes. The
		// drain is over only once the allocations have been read at an
		// index no older than the node's whose drain strategy was
		// cleared: an older read may predate the migrations.
		allocIndex, drainDoneIndex uint64
	)
	for {
		var u drainUpdate
		select {
		case u = <-updates:
		case <-ctx.Done():
			d.m.out("")
			d.mon.info("Monitoring interrupted; the drain continues. Check on it with `drover node status %s`.", d.nodeID)
			return exitError
		}
		if u.err != nil {
			return d.m.errorf("Error monitoring node drain: %v", u.err)
		}
		if u.node != nil {
			node = u.node
			if node.DrainStrategy != nil {
				strategy = node.DrainStrategy
			}
			if node.DrainStrategy == nil && !drainDoneMsg {
				drainDoneIndex = u.index
			}
		}
		if u.fromAllocs {
			allocs, haveAllocs, allocIndex = u.allocs, true, u.index
			d.reportAllocs(allocs)
		}
		if node == nil || !haveAllocs {
			continue
		}
		if node.DrainStrategy == nil && node.LastDrain == nil {
			d.mon.info("Node %q is not draining and never was", shortID(d.nodeID, d.verbose))
			return exitOK
		}
		if node.DrainStrategy == nil && !drainDoneMsg {
			drainDoneMsg = true
			status = "complete"
			if node.LastDrain != nil && node.LastDrain.Status != "" {
				status = node.LastDrain.Status
			}
			d.mon.info("Node %q drain %s", shortID(d.nodeID, d.verbose), status)
			if status == drainStatusCanceled {
				// What was marked still moves, but the drain will not
				// complete: not a success for whoever waits on it.
				return exitError
			}
		}
		if drainDoneMsg && allocIndex >= drainDoneIndex && allStopped(allocs) {
			d.mon.info("All allocations on node %q have stopped", shortID(d.nodeID, d.verbose))
			return exitOK
		}
		// Every change in the counts is shown at once; between changes
		// a reminder now and then.
		counts := drainCounts(allocs, strategy)
		line := fmt.Sprintf("Node %q: %s, %s", shortID(d.nodeID, d.verbose), counts, drainDeadline(strategy, d.m.now()))
		if counts != lastCounts {
			lastCounts = counts
			d.mon.info("%s", line)
		} else {
			d.mon.progress("Still draining. %s", line)
		}
	}
}

// reportAllocs prints what changed for each allocation since last seen.
func (d *drainMonitor) reportAllocs(allocs []*api.Allocation) {
	for _, a := range allocs {
		now := allocSeen{desired: a.DesiredStatus, client: a.ClientStatus, migrate: deref(a.DesiredTransition.Migrate)}
		prev, known := d.seen[a.ID]
		d.seen[a.ID] = now
		id := shortID(a.ID, d.verbose)
		if !known {
			// Allocations already finished when monitoring began are
			// history, not part of this drain.
			if !a.ClientTerminalStatus() && now.migrate {
				d.mon.info("Alloc %q marked for migration", id)
			}
			continue
		}
		if now.migrate && !prev.migrate {
			d.mon.info("Alloc %q marked for migration", id)
		}
		if now.desired != prev.desired && now.desired != api.AllocDesiredStatusRun {
			d.mon.info("Alloc %q draining", id)
		}
		if now.client != prev.client {
			d.mon.info("Alloc %q status %s -> %s", id, prev.client, now.client)
		}
	}
}

// allStopped reports whether every allocation the drain moves has been
// reported stopped by its client. Allocations still wanted on the node
// (system jobs under -ignore-system) do not hold the drain up.
func allStopped(allocs []*api.Allocation) bool {
	for _, a := range allocs {
		if a.DesiredStatus != api.AllocDesiredStatusRun && !a.ClientTerminalStatus() {
			return false
		}
	}
	return true
}

// drainStatusCanceled is LastDrain.Status of a drain an operator stopped.
const drainStatusCanceled = "canceled"

// drainCounts says how far the drain is: allocations migrated off the
// node (marked by the drainer and stopped) and those still to move
// (system allocations the drain ignores do not count).
func drainCounts(allocs []*api.Allocation, strategy *api.DrainStrategy) string {
	var migrated, remaining int
	for _, a := range allocs {
		switch {
		case a.ClientTerminalStatus():
			if deref(a.DesiredTransition.Migrate) {
				migrated++
			}
		case strategy != nil && strategy.IgnoreSystemJobs && a.Job != nil && deref(a.Job.Type) == api.JobTypeSystem:
		default:
			remaining++
		}
	}
	return fmt.Sprintf("%s migrated, %s remaining", plural(migrated, "allocation"), plural(remaining, "allocation"))
}

// drainDeadline says when the drain's deadline comes.
func drainDeadline(s *api.DrainStrategy, now time.Time) string {
	switch {
	case s == nil:
		return "deadline unknown"
	case s.Deadline < 0:
		return "forced"
	case s.ForceDeadline.IsZero():
		return "no deadline"
	case !now.Before(s.ForceDeadline):
		return "deadline passed"
	}
	return "deadline in " + s.ForceDeadline.Sub(now).Round(time.Second).String()
}
