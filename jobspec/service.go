package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// service decodes a service block. Drover does not register services; the
// block is kept as data so that Nomad job files parse and round-trip.
func (d *decoder) service(body hcl.Body) *api.Service {
	s := &api.Service{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"name":                value(&s.Name),
			"tags":                value(&s.Tags),
			"canary_tags":         value(&s.CanaryTags),
			"enable_tag_override": value(&s.EnableTagOverride),
			"port":                value(&s.PortLabel),
			"address_mode":        value(&s.AddressMode),
			"address":             value(&s.Address),
			"task":                value(&s.TaskName),
			"on_update":           value(&s.OnUpdate),
			"provider":            value(&s.Provider),
			"cluster":             value(&s.Cluster),
			"kind":                value(&s.Kind),
		},
		blocks: blockSet{
			"check": many(func(d *decoder, b *hcl.Block) {
				s.Checks = append(s.Checks, d.check(b.Body))
			}),
			"check_restart": one(func(d *decoder, b *hcl.Block) { s.CheckRestart = d.checkRestart(b.Body) }),
		},
		maps: mapSet{
			"meta":             stringMap(&s.Meta),
			"canary_meta":      stringMap(&s.CanaryMeta),
			"tagged_addresses": stringMap(&s.TaggedAddresses),
		},
	})
	return s
}

func (d *decoder) check(body hcl.Body) api.ServiceCheck {
	c := api.ServiceCheck{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"name":                     value(&c.Name),
			"type":                     value(&c.Type),
			"command":                  value(&c.Command),
			"args":                     value(&c.Args),
			"path":                     value(&c.Path),
			"protocol":                 value(&c.Protocol),
			"port":                     value(&c.PortLabel),
			"expose":                   value(&c.Expose),
			"address_mode":             value(&c.AddressMode),
			"advertise":                value(&c.Advertise),
			"interval":                 duration(&c.Interval),
			"timeout":                  duration(&c.Timeout),
			"initial_status":           value(&c.InitialStatus),
			"notes":                    value(&c.Notes),
			"tls_server_name":          value(&c.TLSServerName),
			"tls_skip_verify":          value(&c.TLSSkipVerify),
			"method":                   value(&c.Method),
			"grpc_service":             value(&c.GRPCService),
			"grpc_use_tls":             value(&c.GRPCUseTLS),
			"task":                     value(&c.TaskName),
			"success_before_passing":   value(&c.SuccessBeforePassing),
			"failures_before_critical": value(&c.FailuresBeforeCritical),
			"failures_before_warning":  value(&c.FailuresBeforeWarning),
			"body":                     value(&c.Body),
			"on_update":                value(&c.OnUpdate),
		},
		blocks: blockSet{
			"check_restart": one(func(d *decoder, b *hcl.Block) { c.CheckRestart = d.checkRestart(b.Body) }),
		},
		maps: mapSet{"header": mapOf(&c.Header)},
	})
	return c
}

func (d *decoder) checkRestart(body hcl.Body) *api.CheckRestart {
	r := &api.CheckRestart{}
	d.decodeBody(body, spec{attrs: attrSet{
		"limit":           value(&r.Limit),
		"grace":           durationPtr(&r.Grace),
		"ignore_warnings": value(&r.IgnoreWarnings),
	}})
	return r
}
