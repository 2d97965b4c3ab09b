package command

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/drover-sched/drover/api"
)

const jobScalingEventsHelp = `
Usage: drover job scaling-events [options] <job>

  List a job's recent scaling events, newest first: every "job scale" and
  every request an autoscaler sent, with the count it asked for and the
  count before. The servers keep the last 20 events of each group.

Scaling-Events Options:

  -verbose   Also show whether the event reports an error, its message
             and the evaluation it created.
`

func jobScalingEvents(m *Meta, args []string) int {
	c := m.cmdLine("job scaling-events", jobScalingEventsHelp, takes(1, "<job>")).withVerbose()
	client, jobID, code, ok := c.startFor(args, jobKind)
	if !ok {
		return code
	}
	status, _, err := client.Jobs().ScaleStatus(jobID, nil)
	if err != nil {
		return m.errorf("Error listing scaling events: %v", err)
	}
	events := sortedScalingEvents(status)
	return c.showList(events, len(events), "No events found", func() string { return scalingEventTable(events, c.verbose) })
}

// groupEvent is a scaling event with the group it belongs to.
type groupEvent struct {
	group string
	event api.ScalingEvent
}

// sortedScalingEvents merges the groups' events, newest first (by time,
// then by the raft index that recorded them, then by group).
func sortedScalingEvents(s *api.JobScaleStatusResponse) []groupEvent {
	var out []groupEvent
	for group, tg := range s.TaskGroups {
		for _, e := range tg.Events {
			out = append(out, groupEvent{group: group, event: e})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].event, out[j].event
		if a.Time != b.Time {
			return a.Time > b.Time
		}
		if a.CreateIndex != b.CreateIndex {
			return a.CreateIndex > b.CreateIndex
		}
		return out[i].group < out[j].group
	})
	return out
}

// scalingEventTable lays out events as Nomad's CLI does: Task Group,
// Count, PrevCount, with -verbose Error, Message and Eval ID, then Date.
func scalingEventTable(events []groupEvent, verbose bool) string {
	header := "Task Group|Count|PrevCount"
	if verbose {
		header += "|Error|Message|Eval ID"
	}
	rows := []string{header + "|Date"}
	for _, ge := range events {
		e := ge.event
		count := ""
		if e.Count != nil {
			count = strconv.FormatInt(*e.Count, 10)
		}
		row := fmt.Sprintf("%s|%s|%d", ge.group, count, e.PreviousCount)
		if verbose {
			row += fmt.Sprintf("|%t|%s|%s", e.Error, e.Message, deref(e.EvalID))
		}
		rows = append(rows, row+"|"+formatUnixNano(int64(e.Time)))
	}
	return columns(rows)
}
