package docker

import (
	"context"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
)

// reapLoop removes dangling containers every gc.dangling_containers.period
// until the driver shuts down.
func (d *Driver) reapLoop() {
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-d.clock.After(d.opts.Config.GC.Dangling.Period):
		}
		if n, err := d.ReapDangling(d.ctx); err != nil {
			d.logger.Warn("removing dangling containers failed", "error", err)
		} else if n > 0 {
			d.logger.Info("removed dangling containers", "count", n)
		}
	}
}

// ReapDangling removes the containers Drover labelled for this node that
// no task of this driver holds and whose alloc is no longer live (per
// Options.AllocLive), sparing those younger than the creation grace, which
// may belong to a start in progress. It returns how many it removed.
// Containers without Drover's labels, and those of other nodes sharing
// the daemon, are never touched; until the node ID is known nothing is.
func (d *Driver) ReapDangling(ctx context.Context) (int, error) {
	node := d.opts.NodeID()
	if node == "" {
		return 0, nil
	}
	f := filters.NewArgs(filters.Arg("label", LabelAllocID), filters.Arg("label", LabelNodeID+"="+node))
	if d.opts.reapOnly != "" {
		f.Add("label", d.opts.reapOnly)
	}
	list, err := d.docker.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return 0, err
	}
	grace := d.opts.Config.GC.Dangling.CreationGrace
	now := d.clock.Now()
	removed := 0
	for _, c := range list {
		if d.tracked(c.ID) {
			continue
		}
		if now.Sub(time.Unix(c.Created, 0)) < grace {
			continue
		}
		if alloc := c.Labels[LabelAllocID]; d.opts.AllocLive != nil && d.opts.AllocLive(alloc) {
			continue
		}
		if err := d.removeContainer(c.ID); err != nil {
			d.logger.Warn("cannot remove dangling container", "container", shortID(c.ID), "error", err)
			continue
		}
		d.logger.Debug("removed dangling container", "container", shortID(c.ID), "alloc_id", c.Labels[LabelAllocID])
		removed++
	}
	return removed, nil
}
