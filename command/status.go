package command

import (
	"fmt"
	"strings"
)

const statusHelp = `
Usage: drover status [options] [id]

  Without an ID, list all jobs (as "job status" does). With an ID or
  prefix, find what it names (a job, node, allocation, evaluation or
  deployment) and show that object's status.

Status Options:

  -verbose   Show full IDs.
`

// statusKind is one kind of object `status` can find by ID prefix, and
// the verb that shows it.
type statusKind struct {
	idKind
	show func(m *Meta, args []string) int
}

var statusKinds = []statusKind{
	{jobKind, jobStatus},
	{nodeKind, nodeStatus},
	{allocKind, allocStatus},
	{evalKind, evalStatus},
	{deploymentKind, deploymentStatus},
}

func status(m *Meta, args []string) int {
	c := m.cmdLine("status", statusHelp, takesUpTo(0, 1, "[id]")).withVerbose()
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	if c.NArg() == 0 {
		return listJobs(c, client)
	}
	prefix := c.Arg(0)

	type match struct {
		kind statusKind
		ids  []string
	}
	var matches []match
	for _, k := range statusKinds {
		ids, _, err := k.find(m, client, prefix, false)
		if err != nil {
			return m.errorf("Error looking up %ss: %v", k.name, err)
		}
		if len(ids) > 0 {
			matches = append(matches, match{k, ids})
		}
	}
	// Job IDs are chosen by people, so "web" names the job even if some
	// UUID happened to start with the same letters.
	for _, mt := range matches {
		if pick(prefix, mt.ids) == prefix {
			return mt.kind.show(m, forward(m, prefix, c.verbose))
		}
	}
	switch len(matches) {
	case 0:
		return m.errorf("No job, node, allocation, evaluation or deployment with prefix or ID %q found", prefix)
	case 1:
		return matches[0].kind.show(m, forward(m, prefix, c.verbose))
	}
	var kinds []string
	for _, mt := range matches {
		kinds = append(kinds, fmt.Sprintf("%s (%d)", mt.kind.name, len(mt.ids)))
	}
	return m.errorf("Prefix %q matches more than one kind of object: %s\nUse a longer prefix, or the kind's own status command.",
		prefix, strings.Join(kinds, ", "))
}

// forward rebuilds the arguments for the kind's status command, carrying
// over the client flags already parsed.
func forward(m *Meta, id string, verbose bool) []string {
	var args []string
	for _, f := range []struct{ name, value string }{
		{"address", m.address}, {"namespace", m.namespace}, {"region", m.region}, {"token", m.token},
	} {
		if f.value != "" {
			args = append(args, "-"+f.name+"="+f.value)
		}
	}
	if verbose {
		args = append(args, "-verbose")
	}
	return append(args, id)
}
