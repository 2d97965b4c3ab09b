package api

import (
	"fmt"
	"time"
)

// Service update behaviours: which check results count as healthy during a
// deployment.
const (
	OnUpdateRequireHealthy = "require_healthy"
	OnUpdateIgnoreWarn     = "ignore_warnings"
	OnUpdateIgnore         = "ignore"
)

// ServiceProviderConsul is the provider of a service that names none.
const ServiceProviderConsul = "consul"

// Service describes how a group or task would be advertised for discovery.
// Drover does not register services; it keeps them as data so that jobs
// written for Nomad decode, round-trip and diff unchanged.
type Service struct {
	Name              string
	Tags              []string
	CanaryTags        []string
	EnableTagOverride bool
	PortLabel         string
	AddressMode       string
	Address           string
	Checks            []ServiceCheck
	CheckRestart      *CheckRestart
	Meta              map[string]string
	CanaryMeta        map[string]string
	TaggedAddresses   map[string]string
	TaskName          string
	OnUpdate          string
	Provider          string
	Cluster           string
	Kind              string
}

// Canonicalize fills the service's defaults. t is nil for a group service;
// the default name is "<job>-<group>" or "<job>-<group>-<task>".
func (s *Service) Canonicalize(t *Task, tg *TaskGroup, job *Job) {
	if s.Name == "" {
		jobName, groupName := "", ""
		if job != nil && job.Name != nil {
			jobName = *job.Name
		}
		if tg != nil && tg.Name != nil {
			groupName = *tg.Name
		}
		if t != nil {
			s.Name = fmt.Sprintf("%s-%s-%s", jobName, groupName, t.Name)
		} else {
			s.Name = fmt.Sprintf("%s-%s", jobName, groupName)
		}
	}
	if s.AddressMode == "" {
		s.AddressMode = "auto"
	}
	if s.OnUpdate == "" {
		s.OnUpdate = OnUpdateRequireHealthy
	}
	if s.Provider == "" {
		s.Provider = ServiceProviderConsul
	}
	if s.Cluster == "" {
		s.Cluster = "default"
	}
	if len(s.Meta) == 0 {
		s.Meta = nil
	}
	if len(s.CanaryMeta) == 0 {
		s.CanaryMeta = nil
	}
	if len(s.TaggedAddresses) == 0 {
		s.TaggedAddresses = nil
	}

	// A service-level check_restart applies to each check, and a check may
	// override it field by field.
	for i := range s.Checks {
		c := &s.Checks[i]
		c.CheckRestart = s.CheckRestart.Merge(c.CheckRestart)
		c.CheckRestart.Canonicalize()
		c.SuccessBeforePassing = max(c.SuccessBeforePassing, 0)
		c.FailuresBeforeCritical = max(c.FailuresBeforeCritical, 0)
		c.FailuresBeforeWarning = max(c.FailuresBeforeWarning, 0)
		if c.OnUpdate == "" {
			c.OnUpdate = s.OnUpdate
		}
	}
}

// ServiceCheck is a health check of a service.
type ServiceCheck struct {
	Name                   string
	Type                   string
	Command                string
	Args                   []string
	Path                   string
	Protocol               string
	PortLabel              string
	Expose                 bool
	AddressMode            string
	Advertise              string
	Interval               time.Duration
	Timeout                time.Duration
	InitialStatus          string
	Notes                  string
	TLSServerName          string
	TLSSkipVerify          bool
	Header                 map[string][]string
	Method                 string
	CheckRestart           *CheckRestart
	GRPCService            string
	GRPCUseTLS             bool
	TaskName               string
	SuccessBeforePassing   int
	FailuresBeforeCritical int
	FailuresBeforeWarning  int
	Body                   string
	OnUpdate               string
}

// CheckRestart restarts a task after Limit consecutive failed checks,
// waiting Grace after each start before counting.
type CheckRestart struct {
	Limit          int
	Grace          *time.Duration
	IgnoreWarnings bool
}

// Canonicalize defaults the grace period to one second. It accepts nil.
func (c *CheckRestart) Canonicalize() {
	if c == nil {
		return
	}
	if c.Grace == nil {
		c.Grace = new(time.Second)
	}
}

// Merge returns c overridden by the fields o sets, without changing either.
// A nil c returns o itself.
func (c *CheckRestart) Merge(o *CheckRestart) *CheckRestart {
	if c == nil {
		return o
	}
	merged := *c
	if o == nil {
		return &merged
	}
	if o.Limit > 0 {
		merged.Limit = o.Limit
	}
	if o.Grace != nil {
		merged.Grace = o.Grace
	}
	if o.IgnoreWarnings {
		merged.IgnoreWarnings = true
	}
	return &merged
}
