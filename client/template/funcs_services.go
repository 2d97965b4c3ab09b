package template

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/drover-sched/drover/structs"
)

// ServiceData is the native service catalog a render reads for
// nomadService and nomadServices: every registration of the task's
// namespace, read by the agent (the render child cannot call the
// servers) and bounded by structs.MaxTemplateServiceRegistrations.
type ServiceData struct {
	// Region is the client's; a query naming another region is refused.
	Region        string
	Registrations []*structs.ServiceRegistration
}

// NomadService is one instance as nomadService returns it, with
// consul-template's field names.
type NomadService struct {
	ID         string
	Name       string
	Namespace  string
	Node       string
	Datacenter string
	JobID      string
	AllocID    string
	Tags       ServiceTags
	Address    string
	Port       int
}

// NomadServicesSnippet is one service as nomadServices returns it.
type NomadServicesSnippet struct {
	Name string
	Tags ServiceTags
}

// ServiceTags are a service's tags; Contains is what templates test them
// with, as in consul-template.
type ServiceTags []string

// Contains reports whether the tags hold tag.
func (t ServiceTags) Contains(tag string) bool {
	for _, x := range t {
		if x == tag {
			return true
		}
	}
	return false
}

// errNoServiceData is a render that calls a service function without the
// catalog having been read for it.
var errNoServiceData = errors.New("the service catalog was not read for this template: Drover reads it for templates " +
	"whose data calls nomadService or nomadServices, not for templates read from a source file; put the template in data")

// UsesServices reports whether a template calls nomadService or
// nomadServices, so the agent reads the catalog before rendering it.
func UsesServices(t *structs.Template) bool {
	return t != nil && strings.Contains(t.EmbeddedTmpl, "nomadService")
}

// nomadService answers `nomadService "[tag.]name[@region]"`: the live
// instances of the service in the task's namespace, with the tag if one
// is given. consul-template's three-argument form, which picks a stable
// subset of instances, is refused.
func (fe *funcEnv) nomadService(args ...any) ([]*NomadService, error) {
	if fe.services == nil {
		return nil, errNoServiceData
	}
	if len(args) != 1 {
		return nil, fmt.Errorf("nomadService takes one argument, \"[tag.]name[@region]\" (the %d-argument form is not supported by Drover)", len(args))
	}
	q, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("nomadService: the query must be a string like \"web\" or \"v2.web\", not %T", args[0])
	}
	tag, name, err := fe.parseServiceQuery(q)
	if err != nil {
		return nil, err
	}
	out := []*NomadService{}
	for _, r := range fe.services.Registrations {
		if r.ServiceName != name || (tag != "" && !ServiceTags(r.Tags).Contains(tag)) {
			continue
		}
		out = append(out, &NomadService{
			ID: r.ID, Name: r.ServiceName, Namespace: r.Namespace, Node: r.NodeID, Datacenter: r.Datacenter,
			JobID: r.JobID, AllocID: r.AllocID, Tags: append(ServiceTags(nil), r.Tags...), Address: r.Address, Port: r.Port,
		})
	}
	return out, nil
}

// parseServiceQuery splits "[tag.]name[@region]". A service name has no
// dots, so the tag is everything before the last one.
func (fe *funcEnv) parseServiceQuery(q string) (tag, name string, err error) {
	rest, region, hasRegion := strings.Cut(q, "@")
	if hasRegion && region != fe.services.Region {
		return "", "", fmt.Errorf("nomadService %q: region %q is not this client's (%q); Drover reads services of its own region only", q, region, fe.services.Region)
	}
	if i := strings.LastIndex(rest, "."); i >= 0 {
		tag, rest = rest[:i], rest[i+1:]
	}
	if err := structs.ValidateServiceName(rest); err != nil {
		return "", "", fmt.Errorf("nomadService %q: %w", q, err)
	}
	return tag, rest, nil
}

// nomadServices answers `nomadServices`: every service of the task's
// namespace with the union of its instances' tags, by name.
func (fe *funcEnv) nomadServices(args ...any) ([]*NomadServicesSnippet, error) {
	if fe.services == nil {
		return nil, errNoServiceData
	}
	if len(args) != 0 {
		return nil, fmt.Errorf("nomadServices takes no arguments in Drover (it lists the task's own namespace)")
	}
	tags := map[string]map[string]bool{}
	for _, r := range fe.services.Registrations {
		if tags[r.ServiceName] == nil {
			tags[r.ServiceName] = map[string]bool{}
		}
		for _, t := range r.Tags {
			tags[r.ServiceName][t] = true
		}
	}
	out := make([]*NomadServicesSnippet, 0, len(tags))
	for name, set := range tags {
		s := &NomadServicesSnippet{Name: name, Tags: ServiceTags{}}
		for t := range set {
			s.Tags = append(s.Tags, t)
		}
		sort.Strings(s.Tags)
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
