package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// group decodes a group block; the label is the group's name.
func (d *decoder) group(name string, body hcl.Body) *api.TaskGroup {
	g := &api.TaskGroup{Name: new(name)}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"count":                        pointer(&g.Count),
			"shutdown_delay":               durationPtr(&g.ShutdownDelay),
			"max_client_disconnect":        durationPtr(&g.MaxClientDisconnect),
			"stop_after_client_disconnect": durationPtr(&g.StopAfterClientDisconnect),
			"prevent_reschedule_on_lost":   pointer(&g.PreventRescheduleOnLost),
		},
		blocks: blockSet{
			"constraint": many(func(d *decoder, b *hcl.Block) {
				g.Constraints = append(g.Constraints, d.constraint(b.Body))
			}),
			"affinity": many(func(d *decoder, b *hcl.Block) {
				g.Affinities = append(g.Affinities, d.affinity(b.Body))
			}),
			"spread": many(func(d *decoder, b *hcl.Block) {
				g.Spreads = append(g.Spreads, d.spread(b.Body))
			}),
			"task": labeled(func(d *decoder, b *hcl.Block) {
				g.Tasks = append(g.Tasks, d.task(b.Labels[0], b.Body))
			}, "name"),
			"volume": labeled(func(d *decoder, b *hcl.Block) {
				if g.Volumes == nil {
					g.Volumes = map[string]*api.VolumeRequest{}
				}
				if _, dup := g.Volumes[b.Labels[0]]; dup {
					d.errorf(b.LabelRanges[0], "Duplicate volume", "A volume named %q is already defined in this group.", b.Labels[0])
					return
				}
				g.Volumes[b.Labels[0]] = d.volume(b.Labels[0], b.Body)
			}, "name"),
			"network": many(func(d *decoder, b *hcl.Block) {
				g.Networks = append(g.Networks, d.network(b.Body))
			}),
			"service": many(func(d *decoder, b *hcl.Block) {
				g.Services = append(g.Services, d.service(b.Body))
			}),
			"restart":        one(func(d *decoder, b *hcl.Block) { g.RestartPolicy = d.restart(b.Body) }),
			"disconnect":     one(func(d *decoder, b *hcl.Block) { g.Disconnect = d.disconnect(b.Body) }),
			"reschedule":     one(func(d *decoder, b *hcl.Block) { g.ReschedulePolicy = d.reschedule(b.Body) }),
			"ephemeral_disk": one(func(d *decoder, b *hcl.Block) { g.EphemeralDisk = d.ephemeralDisk(b.Body) }),
			"update":         one(func(d *decoder, b *hcl.Block) { g.Update = d.update(b.Body) }),
			"migrate":        one(func(d *decoder, b *hcl.Block) { g.Migrate = d.migrate(b.Body) }),
			"scaling":        one(func(d *decoder, b *hcl.Block) { g.Scaling = d.scaling(b.Body) }),
		},
		maps: mapSet{"meta": stringMap(&g.Meta)},
	})
	return g
}

// ephemeralDisk decodes an ephemeral_disk block.
func (d *decoder) ephemeralDisk(body hcl.Body) *api.EphemeralDisk {
	e := &api.EphemeralDisk{}
	d.decodeBody(body, spec{attrs: attrSet{
		"sticky":  pointer(&e.Sticky),
		"migrate": pointer(&e.Migrate),
		"size":    pointer(&e.SizeMB),
	}})
	return e
}
