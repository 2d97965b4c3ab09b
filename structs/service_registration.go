package structs

import (
	"fmt"
	"strings"
)

// ServiceProviderNomad is the provider of a service registered in the
// servers' own catalog rather than in Consul.
const ServiceProviderNomad = "nomad"

// Bounds on what one client can register. A registration is written by a
// node for its own allocs, but a node is a caller like any other: these
// keep one request, and one alloc's share of the table, small.
const (
	// MaxServiceRegistrationsPerRequest bounds one upsert or delete batch.
	MaxServiceRegistrationsPerRequest = 256
	// MaxServiceRegistrationIDLen bounds a registration's ID.
	MaxServiceRegistrationIDLen = 512
	// MaxServiceNameLen is a DNS label's length, as a service name must
	// be usable as one.
	MaxServiceNameLen = 63
	// MaxServiceTags bounds a registration's tags, MaxServiceTagLen each.
	MaxServiceTags   = 64
	MaxServiceTagLen = 255
	// MaxServiceAddressLen bounds the advertised address (a host name or
	// an IP).
	MaxServiceAddressLen = 255
)

// ServiceRegistration is one instance of a `provider = "nomad"` service: a
// service block of one alloc, registered by the alloc's client while the
// alloc (or its task) runs. The servers delete it in the same raft entry
// that makes its alloc terminal, marks its node down, or purges its job,
// so a registration never outlives what it advertises.
type ServiceRegistration struct {
	// ID is derived from the alloc, task, service name and port label
	// (MakeAllocServiceID), so a client that restarts registers the same
	// IDs again instead of adding duplicates.
	ID          string
	ServiceName string
	Namespace   string
	NodeID      string
	Datacenter  string
	JobID       string
	AllocID     string
	Tags        []string
	Address     string
	Port        int
	CreateIndex uint64
	ModifyIndex uint64
}

// MakeAllocServiceID is the ID of the registration of service in an
// alloc: taskName is the task of a task-level service, or "group-<group>"
// for a group-level one.
func MakeAllocServiceID(allocID, taskName string, service *Service) string {
	return fmt.Sprintf("_nomad-task-%s-%s-%s-%s", allocID, taskName, service.Name, service.PortLabel)
}

// AllocServiceIDs maps the ID of every registration alloc's job allows
// (its group's and tasks' services with provider "nomad") to the service's
// name. The servers accept only these from the alloc's client.
func AllocServiceIDs(alloc *Allocation) map[string]string {
	out := map[string]string{}
	if alloc == nil || alloc.Job == nil {
		return out
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return out
	}
	for _, s := range tg.Services {
		if s != nil && s.Provider == ServiceProviderNomad {
			out[MakeAllocServiceID(alloc.ID, "group-"+tg.Name, s)] = s.Name
		}
	}
	for _, t := range tg.Tasks {
		for _, s := range t.Services {
			if s != nil && s.Provider == ServiceProviderNomad {
				out[MakeAllocServiceID(alloc.ID, t.Name, s)] = s.Name
			}
		}
	}
	return out
}

// Copy returns a deep copy.
func (s *ServiceRegistration) Copy() *ServiceRegistration {
	if s == nil {
		return nil
	}
	c := *s
	if s.Tags != nil {
		c.Tags = append([]string(nil), s.Tags...)
	}
	return &c
}

// Equal reports whether two registrations advertise the same thing; the
// raft indexes are not compared.
func (s *ServiceRegistration) Equal(o *ServiceRegistration) bool {
	if s == nil || o == nil {
		return s == o
	}
	if s.ID != o.ID || s.ServiceName != o.ServiceName || s.Namespace != o.Namespace || s.NodeID != o.NodeID ||
		s.Datacenter != o.Datacenter || s.JobID != o.JobID || s.AllocID != o.AllocID ||
		s.Address != o.Address || s.Port != o.Port || len(s.Tags) != len(o.Tags) {
		return false
	}
	for i := range s.Tags {
		if s.Tags[i] != o.Tags[i] {
			return false
		}
	}
	return true
}

// Validate checks a registration a client sent, naming the field that is
// wrong and what would be right.
func (s *ServiceRegistration) Validate() error {
	if s == nil {
		return fmt.Errorf("service registration is null: send an object with ID, ServiceName, AllocID and Port")
	}
	switch {
	case s.ID == "":
		return fmt.Errorf("service registration: ID is empty")
	case len(s.ID) > MaxServiceRegistrationIDLen:
		return fmt.Errorf("service registration: ID is %d bytes, more than the %d allowed", len(s.ID), MaxServiceRegistrationIDLen)
	case s.AllocID == "":
		return fmt.Errorf("service registration %s: AllocID is empty: a registration belongs to an allocation", s.ID)
	}
	if err := ValidateServiceName(s.ServiceName); err != nil {
		return fmt.Errorf("service registration %s: ServiceName: %w", s.ID, err)
	}
	if len(s.Tags) > MaxServiceTags {
		return fmt.Errorf("service registration %s: Tags has %d entries, more than the %d allowed", s.ID, len(s.Tags), MaxServiceTags)
	}
	for i, t := range s.Tags {
		if len(t) > MaxServiceTagLen {
			return fmt.Errorf("service registration %s: Tags[%d] is %d bytes, more than the %d allowed", s.ID, i, len(t), MaxServiceTagLen)
		}
	}
	if len(s.Address) > MaxServiceAddressLen {
		return fmt.Errorf("service registration %s: Address is %d bytes, more than the %d allowed", s.ID, len(s.Address), MaxServiceAddressLen)
	}
	if s.Port < 0 || s.Port > 65535 {
		return fmt.Errorf("service registration %s: Port %d is not between 0 and 65535", s.ID, s.Port)
	}
	return nil
}

// ValidateServiceName checks a service name the way DNS checks a label
// (RFC 1123): 1 to 63 letters, digits and dashes, not starting or ending
// with a dash, because service names end up in DNS.
func ValidateServiceName(name string) error {
	if name == "" {
		return fmt.Errorf("a service name is required")
	}
	if len(name) > MaxServiceNameLen {
		return fmt.Errorf("service name %q is %d characters, more than %d", name, len(name), MaxServiceNameLen)
	}
	if strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") {
		return fmt.Errorf("service name %q must not start or end with a dash", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("service name %q has %q: use only letters, digits and dashes", name, r)
		}
	}
	return nil
}

// ServiceRegistrationStub is one service of a namespace as the list
// endpoint shows it: its name and the union of its instances' tags.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// ServiceRegistrationListStub is the services of one namespace.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// MaxTemplateServiceRegistrations bounds what one template read of a
// namespace's registrations may answer, so a client's render child is
// never handed an unbounded catalog.
const MaxTemplateServiceRegistrations = 4096
