package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// resources decodes a resources block. Memory and disk are in MiB, CPU in
// MHz.
func (d *decoder) resources(body hcl.Body) *api.Resources {
	r := &api.Resources{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"cpu":        pointer(&r.CPU),
			"cores":      pointer(&r.Cores),
			"memory":     pointer(&r.MemoryMB),
			"memory_max": pointer(&r.MemoryMaxMB),
			"disk":       pointer(&r.DiskMB),
		},
		blocks: blockSet{
			"network": many(func(d *decoder, b *hcl.Block) {
				r.Networks = append(r.Networks, d.network(b.Body))
			}),
			"device": labeled(func(d *decoder, b *hcl.Block) {
				r.Devices = append(r.Devices, d.device(b.Labels[0], b.Body))
			}, "name"),
		},
	})
	return r
}

func (d *decoder) device(name string, body hcl.Body) *api.RequestedDevice {
	dev := &api.RequestedDevice{Name: name}
	d.decodeBody(body, spec{
		attrs: attrSet{"count": pointer(&dev.Count)},
		blocks: blockSet{
			"constraint": many(func(d *decoder, b *hcl.Block) {
				dev.Constraints = append(dev.Constraints, d.constraint(b.Body))
			}),
			"affinity": many(func(d *decoder, b *hcl.Block) {
				dev.Affinities = append(dev.Affinities, d.affinity(b.Body))
			}),
		},
	})
	return dev
}
