package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// network decodes a network block. A job file writes every port as a port
// block; the ones with a static host port are reserved ports in the API and
// the rest are dynamic, as Nomad's parser splits them.
func (d *decoder) network(body hcl.Body) *api.NetworkResource {
	n := &api.NetworkResource{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"mode":     value(&n.Mode),
			"device":   value(&n.Device),
			"cidr":     value(&n.CIDR),
			"ip":       value(&n.IP),
			"hostname": value(&n.Hostname),
			"mbits":    pointer(&n.MBits),
		},
		blocks: blockSet{
			"port": labeled(func(d *decoder, b *hcl.Block) {
				p := d.port(b.Labels[0], b.Body)
				if p.Value > 0 {
					n.ReservedPorts = append(n.ReservedPorts, p)
				} else {
					n.DynamicPorts = append(n.DynamicPorts, p)
				}
			}, "label"),
			"dns": one(func(d *decoder, b *hcl.Block) {
				n.DNS = &api.DNSConfig{}
				d.decodeBody(b.Body, spec{attrs: attrSet{
					"servers":  value(&n.DNS.Servers),
					"searches": value(&n.DNS.Searches),
					"options":  value(&n.DNS.Options),
				}})
			}),
		},
	})
	return n
}

func (d *decoder) port(label string, body hcl.Body) api.Port {
	p := api.Port{Label: label}
	d.decodeBody(body, spec{attrs: attrSet{
		"static":           value(&p.Value),
		"to":               value(&p.To),
		"host_network":     value(&p.HostNetwork),
		"ignore_collision": value(&p.IgnoreCollision),
	}})
	return p
}
