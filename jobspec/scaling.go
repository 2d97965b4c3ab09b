package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// scaling decodes a group's scaling block. Drover has no autoscaler, but
// the block's min and max bound every scaling request, so it is kept; the
// policy block belongs to the autoscaler and is kept as opaque data, read
// like a driver config. (A task's labelled scaling blocks, for dynamic
// application sizing, are still skipped with a warning.)
func (d *decoder) scaling(body hcl.Body) *api.ScalingPolicy {
	p := &api.ScalingPolicy{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"enabled": pointer(&p.Enabled),
			"min":     pointer(&p.Min),
			"max":     pointer(&p.Max),
			"type":    value(&p.Type),
		},
		blocks: blockSet{
			"policy": one(func(d *decoder, b *hcl.Block) { p.Policy = d.config(b.Body) }),
		},
	})
	return p
}
