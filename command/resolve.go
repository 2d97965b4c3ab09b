package command

import (
	"fmt"
	"sort"

	"github.com/drover-sched/drover/api"
)

// Resolving IDs. Every command that takes an ID also takes a prefix of it,
// as Nomad's does, because people copy the 8-character short IDs the
// tables print. An exact match always wins; several matches are listed so
// the user can pick; none is an error.
//
// Each resolver returns the full ID, or ok=false with the exit code to
// return after it has printed why.

// resolveJob resolves a job ID or prefix. ambiguousCode is the exit code
// when the prefix matches several jobs: 0 for status commands, which
// answer with the list, 1 for commands that change something.
func (m *Meta) resolveJob(c *api.Client, id string, ambiguousCode int) (string, int, bool) {
	jobs, _, err := c.Jobs().PrefixList(id)
	if err != nil {
		return "", m.errorf("Error looking up job %q: %v", id, err), false
	}
	for _, j := range jobs {
		if j.ID == id {
			return id, 0, true
		}
	}
	switch len(jobs) {
	case 0:
		return "", m.errorf("No job(s) with prefix or ID %q found", id), false
	case 1:
		return jobs[0].ID, 0, true
	}
	out := m.stdout
	if ambiguousCode != 0 {
		out = m.stderr
	}
	fmt.Fprintf(out, "Prefix matched multiple jobs\n\n%s", jobTable(jobs))
	return "", ambiguousCode, false
}

// resolveNode resolves a node ID or prefix.
func (m *Meta) resolveNode(c *api.Client, id string, verbose bool) (string, int, bool) {
	nodes, _, err := c.Nodes().PrefixList(id)
	if err != nil {
		return "", m.errorf("Error looking up node %q: %v", id, err), false
	}
	ids := nodeIDs(nodes)
	if full := pick(id, ids); full != "" {
		return full, 0, true
	}
	if len(ids) == 0 {
		return "", m.errorf("No node(s) with prefix or ID %q found", id), false
	}
	fmt.Fprintf(m.stderr, "Prefix matched multiple nodes\n\n%s", nodeTable(nodes, verbose))
	return "", 1, false
}

// resolveAlloc resolves an allocation ID or prefix.
func (m *Meta) resolveAlloc(c *api.Client, id string, verbose bool) (string, int, bool) {
	allocs, _, err := c.Allocations().PrefixList(id)
	if err != nil {
		return "", m.errorf("Error looking up allocation %q: %v", id, err), false
	}
	ids := make([]string, len(allocs))
	for i, a := range allocs {
		ids[i] = a.ID
	}
	if full := pick(id, ids); full != "" {
		return full, 0, true
	}
	if len(ids) == 0 {
		return "", m.errorf("No allocation(s) with prefix or ID %q found", id), false
	}
	fmt.Fprintf(m.stderr, "Prefix matched multiple allocations\n\n%s", allocTable(allocs, m.now(), verbose))
	return "", 1, false
}

// resolveEval resolves an evaluation ID or prefix.
func (m *Meta) resolveEval(c *api.Client, id string, verbose bool) (string, int, bool) {
	evals, _, err := c.Evaluations().PrefixList(id)
	if err != nil {
		return "", m.errorf("Error looking up evaluation %q: %v", id, err), false
	}
	ids := make([]string, len(evals))
	for i, e := range evals {
		ids[i] = e.ID
	}
	if full := pick(id, ids); full != "" {
		return full, 0, true
	}
	if len(ids) == 0 {
		return "", m.errorf("No evaluation(s) with prefix or ID %q found", id), false
	}
	fmt.Fprintf(m.stderr, "Prefix matched multiple evaluations\n\n%s", evalTable(evals, verbose))
	return "", 1, false
}

// resolveDeployment resolves a deployment ID or prefix.
func (m *Meta) resolveDeployment(c *api.Client, id string, verbose bool) (string, int, bool) {
	ds, _, err := c.Deployments().PrefixList(id)
	if err != nil {
		return "", m.errorf("Error looking up deployment %q: %v", id, err), false
	}
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	if full := pick(id, ids); full != "" {
		return full, 0, true
	}
	if len(ids) == 0 {
		return "", m.errorf("No deployment(s) with prefix or ID %q found", id), false
	}
	fmt.Fprintf(m.stderr, "Prefix matched multiple deployments\n\n%s", deploymentListTable(ds, verbose))
	return "", 1, false
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

func nodeIDs(nodes []*api.NodeListStub) []string {
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	sort.Strings(ids)
	return ids
}
