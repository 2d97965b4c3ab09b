package command

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/drover-sched/drover/api"
)

const allocStatusHelp = `
Usage: drover alloc status [options] <allocation>

  Show an allocation: where it runs and why, its status history (including
  disconnects and reconnects), rescheduling, and each task's state,
  resources and recent events. The allocation may be given by an ID prefix.

Status Options:

  -json      Print the allocation as JSON.
  -verbose   Show full IDs, absolute times, all task events and placement
             metrics.
`

// recentEvents is how many task events are shown without -verbose.
const recentEvents = 10

func allocStatus(m *Meta, args []string) int {
	c := m.cmdLine("alloc status", allocStatusHelp, takes(1, "<allocation>")).withJSON().withVerbose()
	client, allocID, code, ok := c.startFor(args, allocKind)
	if !ok {
		return code
	}
	alloc, _, err := client.Allocations().Info(allocID, nil)
	if err != nil {
		return m.errorf("Error querying allocation: %v", err)
	}
	if code, done := c.print(alloc); done {
		return code
	}

	var followup *api.Evaluation
	if alloc.FollowupEvalID != "" {
		// Best effort: the eval tells when the reschedule happens.
		followup, _, _ = client.Evaluations().Info(alloc.FollowupEvalID, nil)
	}
	var usage *api.AllocResourceUsage
	var checks api.AllocCheckStatuses
	if alloc.ClientStatus == api.AllocClientStatusRunning {
		// Best effort too: the client may be unreachable, and the
		// allocation is worth showing anyway.
		usage, _ = client.Allocations().Stats(allocID, nil)
		checks, _ = client.Allocations().Checks(allocID, nil)
	}

	var b strings.Builder
	b.WriteString(keyValues(allocHeader(alloc, followup, m.now(), c.verbose)))
	section(&b, "Allocation State History", allocStatesTable(alloc.AllocStates, m.now(), c.verbose))
	section(&b, "Service Checks", checksTable(checks, c.verbose))
	if c.verbose && alloc.Metrics != nil {
		section(&b, "Placement Metrics", formatAllocMetric(alloc.Metrics, "", true))
	}
	for _, name := range taskNames(alloc) {
		b.WriteString("\n")
		b.WriteString(formatTask(alloc, name, usage, m.now(), c.verbose))
	}
	fmt.Fprint(m.stdout, b.String())
	return 0
}

func allocHeader(a *api.Allocation, followup *api.Evaluation, now time.Time, verbose bool) []string {
	created, modified := relUnixNano(a.CreateTime, now), relUnixNano(a.ModifyTime, now)
	if verbose {
		created, modified = formatUnixNano(a.CreateTime), formatUnixNano(a.ModifyTime)
	}
	var version uint64
	if a.Job != nil {
		version = deref(a.Job.Version)
	}
	rows := []string{
		"ID|" + shortID(a.ID, verbose),
		"Eval ID|" + shortID(a.EvalID, verbose),
		"Name|" + a.Name,
		"Node ID|" + shortID(a.NodeID, verbose),
		"Node Name|" + orNone(a.NodeName),
		"Job ID|" + a.JobID,
		fmt.Sprintf("Job Version|%d", version),
		"Client Status|" + a.ClientStatus,
		"Client Description|" + orNone(a.ClientDescription),
		"Desired Status|" + a.DesiredStatus,
		"Desired Description|" + orNone(a.DesiredDescription),
		"Created|" + created,
		"Modified|" + modified,
	}
	if a.DeploymentID != "" {
		health := "unset"
		if s := a.DeploymentStatus; s != nil && s.Healthy != nil {
			health = map[bool]string{true: "healthy", false: "unhealthy"}[*s.Healthy]
		}
		rows = append(rows, "Deployment ID|"+shortID(a.DeploymentID, verbose), "Deployment Health|"+health)
		if a.DeploymentStatus != nil && a.DeploymentStatus.Canary {
			rows = append(rows, "Canary|true")
		}
	}
	if a.PreviousAllocation != "" {
		rows = append(rows, "Previous Allocation|"+shortID(a.PreviousAllocation, verbose))
	}
	if t := a.RescheduleTracker; t != nil && len(t.Events) > 0 {
		rows = append(rows, "Reschedule Attempts|"+rescheduleAttempts(a))
	}
	if a.NextAllocation != "" {
		rows = append(rows, "Replacement Alloc ID|"+shortID(a.NextAllocation, verbose))
	}
	if followup != nil && !followup.WaitUntil.IsZero() {
		rows = append(rows, "Reschedule Eligibility|"+relTime(followup.WaitUntil, now))
	}
	return rows
}

// rescheduleAttempts shows "used/allowed", with the allowance from the
// allocation's group's reschedule policy.
func rescheduleAttempts(a *api.Allocation) string {
	used := len(a.RescheduleTracker.Events)
	if a.Job == nil {
		return fmt.Sprint(used)
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || tg.ReschedulePolicy == nil {
		return fmt.Sprint(used)
	}
	if deref(tg.ReschedulePolicy.Unlimited) {
		return fmt.Sprintf("%d/unlimited", used)
	}
	return fmt.Sprintf("%d/%d", used, deref(tg.ReschedulePolicy.Attempts))
}

func allocStatesTable(states []*api.AllocState, now time.Time, verbose bool) string {
	if len(states) == 0 {
		return ""
	}
	rows := []string{"Time|Field|Value"}
	for _, s := range states {
		when := formatTime(s.Time)
		if !verbose {
			when += " (" + relTime(s.Time, now) + ")"
		}
		rows = append(rows, fmt.Sprintf("%s|%s|%s", when, s.Field, s.Value))
	}
	return columns(rows)
}

// taskNames lists the allocation's tasks: those with state, and those of
// its group that have none yet (a pending allocation).
func taskNames(a *api.Allocation) []string {
	seen := map[string]bool{}
	for name := range a.TaskStates {
		seen[name] = true
	}
	if a.Job != nil {
		if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil {
			for _, t := range tg.Tasks {
				seen[t.Name] = true
			}
		}
	}
	return sortedKeys(seen)
}

func formatTask(a *api.Allocation, name string, usage *api.AllocResourceUsage, now time.Time, verbose bool) string {
	var b strings.Builder
	state := a.TaskStates[name]
	status := api.TaskStatePending
	if state != nil && state.State != "" {
		status = state.State
	}
	fmt.Fprintf(&b, "Task %q is %q\n", name, status)
	b.WriteString("Task Resources:\n")
	b.WriteString(taskResources(a, name, usage))
	if state == nil {
		return b.String()
	}
	b.WriteString("\nTask Events:\n")
	lastRestart := "N/A"
	if !state.LastRestart.IsZero() {
		lastRestart = formatTime(state.LastRestart)
	}
	b.WriteString(keyValues([]string{
		"Started At|" + formatTime(state.StartedAt),
		"Finished At|" + formatTime(state.FinishedAt),
		fmt.Sprintf("Total Restarts|%d", state.Restarts),
		"Last Restart|" + lastRestart,
	}))
	if len(state.Events) > 0 {
		b.WriteString("\nRecent Events:\n")
		b.WriteString(taskEvents(state.Events, verbose))
	}
	return b.String()
}

func taskResources(a *api.Allocation, task string, usage *api.AllocResourceUsage) string {
	var cpu, mem int64
	if a.AllocatedResources != nil {
		if t := a.AllocatedResources.Tasks[task]; t != nil {
			cpu, mem = t.Cpu.CpuShares, t.Memory.MemoryMB
		}
	}
	cpuCell, memCell := fmt.Sprintf("%d MHz", cpu), formatMiB(mem)
	if usage != nil {
		if u := usage.Tasks[task]; u != nil && u.ResourceUsage != nil {
			if c := u.ResourceUsage.CpuStats; c != nil {
				cpuCell = fmt.Sprintf("%.0f/%d MHz", c.TotalTicks, cpu)
			}
			if ms := u.ResourceUsage.MemoryStats; ms != nil {
				used := ms.RSS
				if ms.Usage > 0 {
					used = ms.Usage
				}
				memCell = fmt.Sprintf("%s/%s", formatBytes(used), formatMiB(mem))
			}
		}
	}
	var disk int64
	var addrs []string
	if r := a.AllocatedResources; r != nil {
		disk = r.Shared.DiskMB
		for _, p := range r.Shared.Ports {
			addrs = append(addrs, fmt.Sprintf("%s: %s:%d", p.Label, p.HostIP, p.Value))
		}
	}
	sort.Strings(addrs)
	return columns([]string{
		"CPU|Memory|Disk|Addresses",
		fmt.Sprintf("%s|%s|%s|%s", cpuCell, memCell, formatMiB(disk), strings.Join(addrs, ", ")),
	})
}

// taskEvents lists events newest first.
func taskEvents(events []*api.TaskEvent, verbose bool) string {
	sorted := append([]*api.TaskEvent(nil), events...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Time > sorted[j].Time })
	if !verbose && len(sorted) > recentEvents {
		sorted = sorted[:recentEvents]
	}
	rows := []string{"Time|Type|Description"}
	for _, e := range sorted {
		desc := strings.ReplaceAll(eventDescription(e), "\n", " ")
		rows = append(rows, fmt.Sprintf("%s|%s|%s", formatUnixNano(e.Time), e.Type, desc))
	}
	return columns(rows)
}

// eventDescription is the client's display message if it sent one, or a
// sentence built from the event's fields.
func eventDescription(e *api.TaskEvent) string {
	if e.DisplayMessage != "" {
		return e.DisplayMessage
	}
	switch e.Type {
	case api.TaskReceived:
		return "Task received by client"
	case api.TaskStarted:
		return "Task started by client"
	case api.TaskTerminated:
		s := fmt.Sprintf("Exit Code: %d", e.ExitCode)
		if e.Signal != 0 {
			s += fmt.Sprintf(", Signal: %d", e.Signal)
		}
		if e.Message != "" {
			s += ", Exit Message: " + e.Message
		}
		return s
	case api.TaskKilling:
		if e.KillReason != "" {
			return "Killing task: " + e.KillReason
		}
		return fmt.Sprintf("Sent interrupt. Waiting %s before force killing", e.KillTimeout)
	case api.TaskKilled:
		if e.KillError != "" {
			return e.KillError
		}
		return "Task successfully killed"
	case api.TaskRestarting:
		s := e.RestartReason
		if e.StartDelay > 0 {
			s = strings.TrimSpace(s + " - Restarting in " + time.Duration(e.StartDelay).String())
		}
		return s
	case api.TaskNotRestarting:
		if e.RestartReason != "" {
			return e.RestartReason
		}
		return "Task exceeded restart policy"
	case api.TaskDriverFailure:
		return orNone(e.DriverError)
	case api.TaskFailedValidation:
		return orNone(e.ValidationError)
	case api.TaskSiblingFailed:
		return fmt.Sprintf("Task's sibling %q failed", e.FailedSibling)
	case api.TaskClientReconnected:
		return "Client reconnected"
	}
	return e.Message
}
