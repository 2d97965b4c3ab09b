package api

// PeriodicSpecCron marks a periodic spec as a cron expression, the only
// kind there is.
const PeriodicSpecCron = "cron"

// PeriodicConfig makes a job a template that launches a child job on a cron
// schedule.
type PeriodicConfig struct {
	Enabled *bool

	// Spec is a single cron expression (the job file's "cron").
	// Deprecated in favour of Specs, which allows several.
	Spec *string

	// Specs are cron expressions (the job file's "crons"); the job launches
	// at the earliest next time of any of them.
	Specs    []string
	SpecType *string

	// ProhibitOverlap skips a launch while the previous child still runs.
	ProhibitOverlap *bool

	// TimeZone is the IANA zone the cron expressions are read in.
	TimeZone *string
}

// Canonicalize fills unset fields: enabled, cron, overlap allowed, UTC.
func (p *PeriodicConfig) Canonicalize() {
	if p.Enabled == nil {
		p.Enabled = new(true)
	}
	if p.Spec == nil {
		p.Spec = new("")
	}
	if p.Specs == nil {
		p.Specs = []string{}
	}
	if p.SpecType == nil {
		p.SpecType = new(PeriodicSpecCron)
	}
	if p.ProhibitOverlap == nil {
		p.ProhibitOverlap = new(false)
	}
	if p.TimeZone == nil || *p.TimeZone == "" {
		p.TimeZone = new("UTC")
	}
}

// ParameterizedJobConfig makes a job a template that runs only when
// dispatched, with a payload and metadata given at dispatch time.
type ParameterizedJobConfig struct {
	// Payload is "optional", "required" or "forbidden".
	Payload      string
	MetaRequired []string
	MetaOptional []string
}
