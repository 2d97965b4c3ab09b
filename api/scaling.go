package api

// ScalingPolicyTypeHorizontal is the kind of policy a group's scaling
// block is: it changes how many allocations of the group run.
const ScalingPolicyTypeHorizontal = "horizontal"

// ScalingPolicy is a group's scaling block. Drover has no autoscaler: it
// keeps the block and holds every scaling request (and the group's own
// count) within Min and Max. Policy is the autoscaler's configuration,
// kept as given. Target names the group the policy belongs to; the
// servers fill it.
type ScalingPolicy struct {
	Min     *int64
	Max     *int64
	Policy  map[string]any
	Enabled *bool
	Type    string
	Target  map[string]string
}

// Canonicalize fills the defaults Nomad fills: enabled, horizontal, and
// a minimum of the group's count.
func (p *ScalingPolicy) Canonicalize(groupCount int) {
	if p.Enabled == nil {
		p.Enabled = new(true)
	}
	if p.Min == nil {
		p.Min = new(int64(groupCount))
	}
	if p.Type == "" {
		p.Type = ScalingPolicyTypeHorizontal
	}
}
