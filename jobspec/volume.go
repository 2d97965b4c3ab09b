package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// volume decodes a group's volume block; the label names the volume for
// volume_mount blocks.
func (d *decoder) volume(name string, body hcl.Body) *api.VolumeRequest {
	v := &api.VolumeRequest{Name: name}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"type":            value(&v.Type),
			"source":          value(&v.Source),
			"read_only":       value(&v.ReadOnly),
			"sticky":          value(&v.Sticky),
			"access_mode":     value(&v.AccessMode),
			"attachment_mode": value(&v.AttachmentMode),
			"per_alloc":       value(&v.PerAlloc),
		},
		blocks: blockSet{
			"mount_options": one(func(d *decoder, b *hcl.Block) {
				v.MountOptions = &api.CSIMountOptions{}
				d.decodeBody(b.Body, spec{attrs: attrSet{
					"fs_type":     value(&v.MountOptions.FSType),
					"mount_flags": value(&v.MountOptions.MountFlags),
				}})
			}),
		},
	})
	return v
}

// volumeMount decodes a task's volume_mount block.
func (d *decoder) volumeMount(body hcl.Body) *api.VolumeMount {
	m := &api.VolumeMount{}
	d.decodeBody(body, spec{attrs: attrSet{
		"volume":           pointer(&m.Volume),
		"destination":      pointer(&m.Destination),
		"read_only":        pointer(&m.ReadOnly),
		"propagation_mode": pointer(&m.PropagationMode),
		"selinux_label":    pointer(&m.SELinuxLabel),
	}})
	return m
}
