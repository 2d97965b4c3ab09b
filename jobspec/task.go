package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// task decodes a task block; the label is the task's name.
func (d *decoder) task(name string, body hcl.Body) *api.Task {
	t := &api.Task{Name: name}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"driver":         value(&t.Driver),
			"user":           value(&t.User),
			"leader":         value(&t.Leader),
			"kill_timeout":   durationPtr(&t.KillTimeout),
			"kill_signal":    value(&t.KillSignal),
			"shutdown_delay": duration(&t.ShutdownDelay),
			"kind":           value(&t.Kind),
		},
		blocks: blockSet{
			"config": one(func(d *decoder, b *hcl.Block) { t.Config = d.config(b.Body) }),
			"constraint": many(func(d *decoder, b *hcl.Block) {
				t.Constraints = append(t.Constraints, d.constraint(b.Body))
			}),
			"affinity": many(func(d *decoder, b *hcl.Block) {
				t.Affinities = append(t.Affinities, d.affinity(b.Body))
			}),
			"service": many(func(d *decoder, b *hcl.Block) {
				t.Services = append(t.Services, d.service(b.Body))
			}),
			"artifact": many(func(d *decoder, b *hcl.Block) {
				t.Artifacts = append(t.Artifacts, d.artifact(b.Body))
			}),
			"template": many(func(d *decoder, b *hcl.Block) {
				t.Templates = append(t.Templates, d.template(b.Body))
			}),
			"volume_mount": many(func(d *decoder, b *hcl.Block) {
				t.VolumeMounts = append(t.VolumeMounts, d.volumeMount(b.Body))
			}),
			"lifecycle":        one(func(d *decoder, b *hcl.Block) { t.Lifecycle = d.lifecycle(b.Body) }),
			"resources":        one(func(d *decoder, b *hcl.Block) { t.Resources = d.resources(b.Body) }),
			"restart":          one(func(d *decoder, b *hcl.Block) { t.RestartPolicy = d.restart(b.Body) }),
			"logs":             one(func(d *decoder, b *hcl.Block) { t.LogConfig = d.logs(b.Body) }),
			"dispatch_payload": one(func(d *decoder, b *hcl.Block) { t.DispatchPayload = d.dispatchPayload(b.Body) }),
		},
		maps: mapSet{
			"env":  stringMap(&t.Env),
			"meta": stringMap(&t.Meta),
		},
	})
	return t
}

// lifecycle decodes a lifecycle block; hook is required.
func (d *decoder) lifecycle(body hcl.Body) *api.TaskLifecycle {
	l := &api.TaskLifecycle{}
	d.decodeBody(body, spec{
		attrs: attrSet{
			"hook":    value(&l.Hook),
			"sidecar": value(&l.Sidecar),
		},
		required: []string{"hook"},
	})
	return l
}

// logs decodes a logs block.
func (d *decoder) logs(body hcl.Body) *api.LogConfig {
	l := &api.LogConfig{}
	d.decodeBody(body, spec{attrs: attrSet{
		"max_files":     pointer(&l.MaxFiles),
		"max_file_size": pointer(&l.MaxFileSizeMB),
		"enabled":       pointer(&l.Enabled),
		"disabled":      pointer(&l.Disabled),
	}})
	return l
}

// dispatchPayload decodes a dispatch_payload block.
func (d *decoder) dispatchPayload(body hcl.Body) *api.DispatchPayloadConfig {
	p := &api.DispatchPayloadConfig{}
	d.decodeBody(body, spec{attrs: attrSet{"file": value(&p.File)}})
	return p
}
