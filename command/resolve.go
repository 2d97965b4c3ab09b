package command

import (
	"fmt"

	"github.com/drover-sched/drover/api"
)

// Resolving IDs. Every command that takes an ID also takes a prefix of it,
// as Nomad's does, because people copy the 8-character short IDs the
// tables print. An exact match always wins; several matches are listed so
// the user can pick; none is an error.
//
// Each resolver returns the full ID, or ok=false with the exit code to
// return after it has printed why.

// idKind is a kind of object that verbs name by ID or prefix.
type idKind struct {
	// name is the kind in messages: "Error looking up allocation ...".
	name string
	// matched, if set, names the kind in the "none" and "several"
	// messages instead of name (dispatch looks up jobs, but only
	// parameterized ones match).
	matched string
	// find returns the IDs prefix matches, and the table that lists them
	// when there are several. verbose is the verb's -verbose.
	find func(m *Meta, c *api.Client, prefix string, verbose bool) ([]string, func() string, error)
	// listsAmbiguous answers a prefix that matches several with their
	// list on stdout and exit 0, as a status command does, instead of
	// an error.
	listsAmbiguous bool
}

var (
	jobKind = idKind{name: "job", find: func(m *Meta, c *api.Client, prefix string, _ bool) ([]string, func() string, error) {
		l, _, err := c.Jobs().PrefixList(prefix)
		return idsOf(l, func(j *api.JobListStub) string { return j.ID }), func() string { return jobTable(l) }, err
	}}

	// parameterizedJobKind is the jobs that can be dispatched.
	parameterizedJobKind = idKind{name: "job", matched: "parameterized job", find: findParameterizedJobs}

	nodeKind = idKind{name: "node", find: func(m *Meta, c *api.Client, prefix string, verbose bool) ([]string, func() string, error) {
		l, _, err := c.Nodes().PrefixList(prefix)
		return idsOf(l, func(n *api.NodeListStub) string { return n.ID }), func() string { return nodeTable(l, verbose) }, err
	}}

	allocKind = idKind{name: "allocation", find: func(m *Meta, c *api.Client, prefix string, verbose bool) ([]string, func() string, error) {
		l, _, err := c.Allocations().PrefixList(prefix)
		return idsOf(l, func(a *api.AllocationListStub) string { return a.ID }), func() string { return allocTable(l, m.now(), verbose) }, err
	}}

	evalKind = idKind{name: "evaluation", find: func(m *Meta, c *api.Client, prefix string, verbose bool) ([]string, func() string, error) {
		l, _, err := c.Evaluations().PrefixList(prefix)
		return idsOf(l, func(e *api.Evaluation) string { return e.ID }), func() string { return evalTable(l, verbose) }, err
	}}

	deploymentKind = idKind{name: "deployment", find: func(m *Meta, c *api.Client, prefix string, verbose bool) ([]string, func() string, error) {
		l, _, err := c.Deployments().PrefixList(prefix)
		return idsOf(l, func(d *api.Deployment) string { return d.ID }), func() string { return deploymentListTable(l, verbose) }, err
	}}
)

// findParameterizedJobs matches only parameterized jobs, so that a
// parent's prefix does not also match the children it dispatched. An
// exact ID wins whatever the job.
func findParameterizedJobs(_ *Meta, c *api.Client, prefix string, _ bool) ([]string, func() string, error) {
	l, _, err := c.Jobs().PrefixList(prefix)
	if err != nil {
		return nil, nil, err
	}
	var candidates []*api.JobListStub
	for _, j := range l {
		if j.ID == prefix {
			return []string{prefix}, nil, nil
		}
		if j.ParameterizedJob {
			candidates = append(candidates, j)
		}
	}
	return idsOf(candidates, func(j *api.JobListStub) string { return j.ID }), func() string { return jobTable(candidates) }, nil
}

// listingAmbiguous is k for a status command (see listsAmbiguous).
func (k idKind) listingAmbiguous() idKind {
	k.listsAmbiguous = true
	return k
}

// resolve resolves an ID or prefix of kind k.
func (c *cmdLine) resolve(client *api.Client, k idKind, prefix string) (string, int, bool) {
	m := c.m
	ids, table, err := k.find(m, client, prefix, c.verbose)
	if err != nil {
		return "", m.errorf("Error looking up %s %q: %v", k.name, prefix, err), false
	}
	if full := pick(prefix, ids); full != "" {
		return full, 0, true
	}
	matched := k.name
	if k.matched != "" {
		matched = k.matched
	}
	if len(ids) == 0 {
		return "", m.errorf("No %s(s) with prefix or ID %q found", matched, prefix), false
	}
	if k.listsAmbiguous {
		fmt.Fprintf(m.stdout, "Prefix matched multiple %ss\n\n%s", matched, table())
		return "", 0, false
	}
	fmt.Fprintf(m.stderr, "Prefix matched multiple %ss\n\n%s", matched, table())
	return "", 1, false
}

// clientFor is client, then resolve of the verb's first argument as an ID
// of kind k.
func (c *cmdLine) clientFor(k idKind) (*api.Client, string, int, bool) {
	client, code, ok := c.client()
	if !ok {
		return nil, "", code, false
	}
	id, code, ok := c.resolve(client, k, c.Arg(0))
	return client, id, code, ok
}

// startFor is parse, then clientFor: the prologue of a verb that acts on
// the object its first argument names.
func (c *cmdLine) startFor(args []string, k idKind) (*api.Client, string, int, bool) {
	if code, ok := c.parse(args); !ok {
		return nil, "", code, false
	}
	return c.clientFor(k)
}

// pick returns the ID that id names among matches: an exact match, or the
// only match. "" means none or several.
func pick(id string, matches []string) string {
	for _, m := range matches {
		if m == id {
			return m
		}
	}
	if len(matches) == 1 {
		return matches[0]
	}
	return ""
}

func idsOf[T any](l []T, id func(T) string) []string {
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = id(x)
	}
	return out
}
