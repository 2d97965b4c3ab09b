package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/drover-sched/drover/api"
)

// checksTable lists an allocation's service checks as its client last
// ran them, a group service's checks with "(group)" for their task. With
// verbose, each check's output follows (one line, as the client cut it).
func checksTable(checks api.AllocCheckStatuses, verbose bool) string {
	if len(checks) == 0 {
		return ""
	}
	sorted := make([]api.AllocCheckStatus, 0, len(checks))
	for _, c := range checks {
		sorted = append(sorted, c)
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Service != b.Service {
			return a.Service < b.Service
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		return a.Check < b.Check
	})
	header := "Service|Task|Name|Mode|Status"
	if verbose {
		header += "|Output"
	}
	rows := []string{header}
	for _, c := range sorted {
		task := c.Task
		if task == "" {
			task = "(group)"
		}
		row := fmt.Sprintf("%s|%s|%s|%s|%s", c.Service, task, c.Check, c.Mode, c.Status)
		if verbose {
			row += "|" + strings.Join(strings.Fields(strings.ReplaceAll(c.Output, "|", "/")), " ")
		}
		rows = append(rows, row)
	}
	return columns(rows)
}
