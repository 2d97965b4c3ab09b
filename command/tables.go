package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drover-sched/drover/api"
)

// The list tables that more than one verb prints. Keeping each in one
// place means `job status`, `node status` and a prefix that matched
// several allocations all show allocations the same way.

// jobTable lists jobs: ID, Type, Priority, Status, Submit Date.
func jobTable(jobs []*api.JobListStub) string {
	sorted := append([]*api.JobListStub(nil), jobs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	rows := []string{"ID|Type|Priority|Status|Submit Date"}
	for _, j := range sorted {
		typ := j.Type
		switch {
		case j.Periodic:
			typ += "/periodic"
		case j.ParameterizedJob:
			typ += "/parameterized"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%d|%s|%s", j.ID, typ, j.Priority, jobListStatus(j), formatUnixNano(j.SubmitTime)))
	}
	return columns(rows)
}

// jobListStatus shows a stopped job that still has running allocations as
// "dead (stopped)", so it is not mistaken for a finished one.
func jobListStatus(j *api.JobListStub) string {
	if j.Stop && j.Status != api.JobStatusDead {
		return j.Status + " (stopped)"
	}
	return j.Status
}

// allocTable lists allocations, newest first: ID, Node ID, Task Group,
// Version, Desired, Status, Created, Modified, with relative times.
func allocTable(allocs []*api.AllocationListStub, now time.Time, verbose bool) string {
	sorted := append([]*api.AllocationListStub(nil), allocs...)
	api.SortAllocationsNewestFirst(sorted)
	rows := []string{"ID|Node ID|Task Group|Version|Desired|Status|Created|Modified"}
	for _, a := range sorted {
		created, modified := relUnixNano(a.CreateTime, now), relUnixNano(a.ModifyTime, now)
		if verbose {
			created, modified = formatUnixNano(a.CreateTime), formatUnixNano(a.ModifyTime)
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s|%d|%s|%s|%s|%s",
			shortID(a.ID, verbose), shortID(a.NodeID, verbose), a.TaskGroup, a.JobVersion,
			a.DesiredStatus, a.ClientStatus, created, modified))
	}
	return columns(rows)
}

// allocStubs turns full allocations (as /v1/node/:id/allocations returns)
// into list stubs for allocTable.
func allocStubs(allocs []*api.Allocation) []*api.AllocationListStub {
	out := make([]*api.AllocationListStub, len(allocs))
	for i, a := range allocs {
		var version uint64
		if a.Job != nil {
			version = deref(a.Job.Version)
		}
		out[i] = &api.AllocationListStub{
			ID: a.ID, EvalID: a.EvalID, Name: a.Name, Namespace: a.Namespace, NodeID: a.NodeID,
			NodeName: a.NodeName, JobID: a.JobID, JobVersion: version, TaskGroup: a.TaskGroup,
			DesiredStatus: a.DesiredStatus, ClientStatus: a.ClientStatus, CreateIndex: a.CreateIndex,
			ModifyIndex: a.ModifyIndex, CreateTime: a.CreateTime, ModifyTime: a.ModifyTime,
		}
	}
	return out
}

// nodeTable lists nodes: ID, Node Pool, DC, Name, Class, Drain,
// Eligibility, Status.
func nodeTable(nodes []*api.NodeListStub, verbose bool) string {
	sorted := append([]*api.NodeListStub(nil), nodes...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	header := "ID|Node Pool|DC|Name|Class|Drain|Eligibility|Status"
	if verbose {
		header += "|Address|Version"
	}
	rows := []string{header}
	for _, n := range sorted {
		row := fmt.Sprintf("%s|%s|%s|%s|%s|%t|%s|%s", shortID(n.ID, verbose), orNone(n.NodePool), n.Datacenter,
			n.Name, orNone(n.NodeClass), n.Drain, n.SchedulingEligibility, n.Status)
		if verbose {
			row += fmt.Sprintf("|%s|%s", n.Address, n.Version)
		}
		rows = append(rows, row)
	}
	return columns(rows)
}

// evalTable lists evaluations, newest first.
func evalTable(evals []*api.Evaluation, verbose bool) string {
	sorted := append([]*api.Evaluation(nil), evals...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].CreateIndex > sorted[j].CreateIndex })
	rows := []string{"ID|Priority|Triggered By|Job ID|Namespace|Node ID|Status|Placement Failures"}
	for _, e := range sorted {
		rows = append(rows, fmt.Sprintf("%s|%d|%s|%s|%s|%s|%s|%t", shortID(e.ID, verbose), e.Priority, e.TriggeredBy,
			orNone(e.JobID), e.Namespace, orNone(shortID(e.NodeID, verbose)), e.Status, len(e.FailedTGAllocs) > 0))
	}
	return columns(rows)
}

// section prints a blank line and a title before a block, the layout of
// every status command; empty bodies print nothing.
func section(b *strings.Builder, title, body string) {
	if strings.TrimSpace(body) == "" {
		return
	}
	fmt.Fprintf(b, "\n%s\n%s", title, strings.TrimRight(body, "\n")+"\n")
}
