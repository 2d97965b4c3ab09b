package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// job decodes the job block. The label is the job's ID and, unless the block
// sets name, its name.
func (d *decoder) job(label string, body hcl.Body) *api.Job {
	j := &api.Job{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"id":          pointer(&j.ID),
			"name":        pointer(&j.Name),
			"region":      pointer(&j.Region),
			"namespace":   pointer(&j.Namespace),
			"type":        pointer(&j.Type),
			"priority":    pointer(&j.Priority),
			"all_at_once": pointer(&j.AllAtOnce),
			"datacenters": value(&j.Datacenters),
			"node_pool":   pointer(&j.NodePool),
		},
		blocks: blockSet{
			"constraint": many(func(d *decoder, b *hcl.Block) {
				j.Constraints = append(j.Constraints, d.constraint(b.Body))
			}),
			"affinity": many(func(d *decoder, b *hcl.Block) {
				j.Affinities = append(j.Affinities, d.affinity(b.Body))
			}),
			"spread": many(func(d *decoder, b *hcl.Block) {
				j.Spreads = append(j.Spreads, d.spread(b.Body))
			}),
			"group": labeled(func(d *decoder, b *hcl.Block) {
				j.TaskGroups = append(j.TaskGroups, d.group(b.Labels[0], b.Body))
			}, "name"),
			"update":        one(func(d *decoder, b *hcl.Block) { j.Update = d.update(b.Body) }),
			"periodic":      one(func(d *decoder, b *hcl.Block) { j.Periodic = d.periodic(b.Body) }),
			"parameterized": one(func(d *decoder, b *hcl.Block) { j.ParameterizedJob = d.parameterized(b.Body) }),
			"reschedule":    one(func(d *decoder, b *hcl.Block) { j.Reschedule = d.reschedule(b.Body) }),
			"migrate":       one(func(d *decoder, b *hcl.Block) { j.Migrate = d.migrate(b.Body) }),
		},
		maps: mapSet{"meta": stringMap(&j.Meta)},
	})

	if j.ID == nil {
		j.ID = new(label)
	}
	if j.Name == nil {
		j.Name = new(label)
	}
	return j
}
