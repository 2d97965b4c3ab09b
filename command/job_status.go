package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/drover-sched/drover/api"
)

const jobStatusHelp = `
Usage: drover job status [options] [job]

  Without a job, list all jobs. With a job ID or prefix, show the job, its
  allocation counts per task group, placement failures, its latest
  deployment and its allocations.

Status Options:

  -all-allocs   Include allocations of earlier jobs with the same ID.
  -json         Print the result as JSON.
  -verbose      Show full IDs and absolute times.
`

func jobStatus(m *Meta, args []string) int {
	c := m.cmdLine("job status", jobStatusHelp, takesUpTo(0, 1, "[job]")).withJSON().withVerbose()
	allAllocs := c.Bool("all-allocs", false, "")
	client, code, ok := c.start(args)
	if !ok {
		return code
	}
	if c.NArg() == 0 {
		return listJobs(c, client)
	}
	jobID, code, ok := c.resolve(client, jobKind.listingAmbiguous(), c.Arg(0))
	if !ok {
		return code
	}
	return showJob(c, client, jobID, *allAllocs, c.verbose)
}

// listJobs lists the jobs, for `job status` and `status` without an ID.
func listJobs(c *cmdLine, client *api.Client) int {
	jobs, _, err := client.Jobs().List(nil)
	if err != nil {
		return c.m.errorf("Error querying jobs: %v", err)
	}
	return c.showList(jobs, len(jobs), "No running jobs", func() string { return jobTable(jobs) })
}

// jobStatusJSON is what `job status -json <job>` prints.
type jobStatusJSON struct {
	Job              *api.Job
	Summary          *api.JobSummary
	Allocations      []*api.AllocationListStub
	LatestDeployment *api.Deployment
}

func showJob(c *cmdLine, client *api.Client, jobID string, allAllocs, verbose bool) int {
	m := c.m
	job, _, err := client.Jobs().Info(jobID, nil)
	if err != nil {
		return m.errorf("Error querying job %q: %v", jobID, err)
	}
	summary, _, err := client.Jobs().Summary(jobID, nil)
	if err != nil && !api.IsNotFound(err) {
		return m.errorf("Error querying job summary: %v", err)
	}
	allocs, _, err := client.Jobs().Allocations(jobID, allAllocs, nil)
	if err != nil {
		return m.errorf("Error querying job allocations: %v", err)
	}
	var deployment *api.Deployment
	if deref(job.Type) == api.JobTypeService {
		if deployment, _, err = client.Jobs().LatestDeployment(jobID, nil); err != nil && !api.IsNotFound(err) {
			return m.errorf("Error querying latest deployment: %v", err)
		}
	}
	if code, done := c.print(jobStatusJSON{Job: job, Summary: summary, Allocations: allocs, LatestDeployment: deployment}); done {
		return code
	}
	evals, _, err := client.Jobs().Evaluations(jobID, nil)
	if err != nil && !api.IsNotFound(err) {
		return m.errorf("Error querying job evaluations: %v", err)
	}

	var b strings.Builder
	b.WriteString(keyValues(jobHeader(job)))
	if summary != nil {
		section(&b, "Summary", summaryTable(summary))
	}
	if blocked := latestBlockedEval(evals); blocked != nil {
		section(&b, "Placement Failure", formatFailedPlacements(blocked.FailedTGAllocs, "", verbose))
	}
	if deployment != nil {
		section(&b, "Latest Deployment", formatDeployment(deployment, m.now(), verbose))
	}
	if len(allocs) == 0 {
		b.WriteString("\nAllocations\nNo allocations placed\n")
	} else {
		section(&b, "Allocations", allocTable(allocs, m.now(), verbose))
	}
	fmt.Fprint(m.stdout, b.String())
	return 0
}

func jobHeader(j *api.Job) []string {
	dcs := strings.Join(j.Datacenters, ",")
	if dcs == "" {
		dcs = "*"
	}
	var submit string
	if j.SubmitTime != nil {
		submit = formatUnixNano(*j.SubmitTime)
	}
	return []string{
		"ID|" + deref(j.ID),
		"Name|" + deref(j.Name),
		"Submit Date|" + orNone(submit),
		"Type|" + deref(j.Type),
		fmt.Sprintf("Priority|%d", deref(j.Priority)),
		"Datacenters|" + dcs,
		"Namespace|" + orNone(deref(j.Namespace)),
		"Node Pool|" + orNone(deref(j.NodePool)),
		"Status|" + jobStatusText(j),
		fmt.Sprintf("Periodic|%t", j.IsPeriodic()),
		fmt.Sprintf("Parameterized|%t", j.IsParameterized()),
	}
}

func jobStatusText(j *api.Job) string {
	s := deref(j.Status)
	if deref(j.Stop) && s != api.JobStatusDead {
		return s + " (stopped)"
	}
	return s
}

// summaryTable has one row per task group with the count in each client
// state. Lost and Unknown are always shown: they are how disconnected
// nodes show up.
func summaryTable(s *api.JobSummary) string {
	rows := []string{"Task Group|Queued|Starting|Running|Failed|Complete|Lost|Unknown"}
	for _, tg := range sortedKeys(s.Summary) {
		c := s.Summary[tg]
		rows = append(rows, fmt.Sprintf("%s|%d|%d|%d|%d|%d|%d|%d", tg, c.Queued, c.Starting, c.Running, c.Failed, c.Complete, c.Lost, c.Unknown))
	}
	if c := s.Children; c != nil && c.Pending+c.Running+c.Dead > 0 {
		return columns(rows) + "\nChildren Job Summary\n" +
			columns([]string{"Pending|Running|Dead", fmt.Sprintf("%d|%d|%d", c.Pending, c.Running, c.Dead)})
	}
	return columns(rows)
}

// latestBlockedEval returns the newest evaluation still waiting for
// capacity with placement failures: the reason the job's Queued count is
// not zero.
func latestBlockedEval(evals []*api.Evaluation) *api.Evaluation {
	sorted := append([]*api.Evaluation(nil), evals...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].CreateIndex > sorted[j].CreateIndex })
	for _, e := range sorted {
		if e.Status == api.EvalStatusBlocked && len(e.FailedTGAllocs) > 0 {
			return e
		}
	}
	// A blocked eval carries no metrics in some servers; the eval that
	// created it does.
	for _, e := range sorted {
		if e.BlockedEval != "" && len(e.FailedTGAllocs) > 0 {
			for _, b := range sorted {
				if b.ID == e.BlockedEval && b.Status == api.EvalStatusBlocked {
					return e
				}
			}
		}
	}
	return nil
}
