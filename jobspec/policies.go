package jobspec

import (
	"github.com/hashicorp/hcl/v2"

	"github.com/drover-sched/drover/api"
)

// This file holds the blocks that are plain lists of optional settings.

func (d *decoder) restart(body hcl.Body) *api.RestartPolicy {
	r := &api.RestartPolicy{}
	d.decodeBody(body, spec{attrs: attrSet{
		"attempts":         pointer(&r.Attempts),
		"interval":         durationPtr(&r.Interval),
		"delay":            durationPtr(&r.Delay),
		"mode":             pointer(&r.Mode),
		"render_templates": pointer(&r.RenderTemplates),
	}})
	return r
}

func (d *decoder) reschedule(body hcl.Body) *api.ReschedulePolicy {
	r := &api.ReschedulePolicy{}
	d.decodeBody(body, spec{attrs: attrSet{
		"attempts":       pointer(&r.Attempts),
		"interval":       durationPtr(&r.Interval),
		"delay":          durationPtr(&r.Delay),
		"delay_function": pointer(&r.DelayFunction),
		"max_delay":      durationPtr(&r.MaxDelay),
		"unlimited":      pointer(&r.Unlimited),
	}})
	return r
}

func (d *decoder) disconnect(body hcl.Body) *api.DisconnectStrategy {
	s := &api.DisconnectStrategy{}
	d.decodeBody(body, spec{attrs: attrSet{
		"lost_after":           durationPtr(&s.LostAfter),
		"stop_on_client_after": durationPtr(&s.StopOnClientAfter),
		"replace":              pointer(&s.Replace),
		"reconcile":            pointer(&s.Reconcile),
	}})
	return s
}

func (d *decoder) migrate(body hcl.Body) *api.MigrateStrategy {
	m := &api.MigrateStrategy{}
	d.decodeBody(body, spec{attrs: attrSet{
		"max_parallel":     pointer(&m.MaxParallel),
		"health_check":     pointer(&m.HealthCheck),
		"min_healthy_time": durationPtr(&m.MinHealthyTime),
		"healthy_deadline": durationPtr(&m.HealthyDeadline),
	}})
	return m
}

func (d *decoder) update(body hcl.Body) *api.UpdateStrategy {
	u := &api.UpdateStrategy{}
	d.decodeBody(body, spec{attrs: attrSet{
		"stagger":           durationPtr(&u.Stagger),
		"max_parallel":      pointer(&u.MaxParallel),
		"health_check":      pointer(&u.HealthCheck),
		"min_healthy_time":  durationPtr(&u.MinHealthyTime),
		"healthy_deadline":  durationPtr(&u.HealthyDeadline),
		"progress_deadline": durationPtr(&u.ProgressDeadline),
		"canary":            pointer(&u.Canary),
		"auto_revert":       pointer(&u.AutoRevert),
		"auto_promote":      pointer(&u.AutoPromote),
	}})
	return u
}

// periodic decodes a periodic block. The old single "cron" spec gets the
// spec type set here, as Nomad's parser does.
func (d *decoder) periodic(body hcl.Body) *api.PeriodicConfig {
	p := &api.PeriodicConfig{}
	d.decodeBody(body, spec{attrs: attrSet{
		"enabled":          pointer(&p.Enabled),
		"cron":             pointer(&p.Spec),
		"crons":            value(&p.Specs),
		"prohibit_overlap": pointer(&p.ProhibitOverlap),
		"time_zone":        pointer(&p.TimeZone),
	}})
	if p.Spec != nil {
		p.SpecType = new(api.PeriodicSpecCron)
	}
	return p
}

func (d *decoder) parameterized(body hcl.Body) *api.ParameterizedJobConfig {
	p := &api.ParameterizedJobConfig{}
	d.decodeBody(body, spec{attrs: attrSet{
		"payload":       value(&p.Payload),
		"meta_required": value(&p.MetaRequired),
		"meta_optional": value(&p.MetaOptional),
	}})
	return p
}
