package command

import (
	"fmt"
	"sort"
	"strings"

	"github.com/drover-sched/drover/api"
)

// formatFailedPlacements explains, per task group, why placements failed:
// one "Task Group" line per group, then one reason per line, each indented
// by prefix. It is what `job run`, `job plan`, `eval status` and
// `job status` print, so a user reads the same words everywhere.
func formatFailedPlacements(failed map[string]*api.AllocationMetric, prefix string, verbose bool) string {
	var b strings.Builder
	for _, tg := range sortedKeys(failed) {
		metric := failed[tg]
		n := 1
		if metric != nil {
			n += metric.CoalescedFailures
		}
		fmt.Fprintf(&b, "%sTask Group %q (failed to place %s):\n", prefix, tg, plural(n, "allocation"))
		b.WriteString(formatAllocMetric(metric, prefix+"  ", verbose))
	}
	return b.String()
}

// formatAllocMetric lists the reasons in one placement metric, most
// fundamental first: no nodes at all, then nodes filtered out by class or
// constraint, then nodes that fit the job but had no room and on which
// resource.
func formatAllocMetric(metric *api.AllocationMetric, prefix string, verbose bool) string {
	if metric == nil {
		return ""
	}
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, prefix+"* "+fmt.Sprintf(format, args...)) }

	if metric.NodesEvaluated == 0 {
		add("No nodes were eligible for evaluation")
	}
	for _, dc := range sortedKeys(metric.NodesAvailable) {
		if metric.NodesAvailable[dc] == 0 {
			add("No nodes are available in datacenter %q", dc)
		}
	}
	for _, class := range sortedKeys(metric.ClassFiltered) {
		add("Class %q: %s excluded by filter", class, plural(metric.ClassFiltered[class], "node"))
	}
	for _, c := range sortedKeys(metric.ConstraintFiltered) {
		add("Constraint %q: %s excluded by filter", c, plural(metric.ConstraintFiltered[c], "node"))
	}
	if metric.NodesExhausted > 0 {
		add("Resources exhausted on %s", plural(metric.NodesExhausted, "node"))
	}
	for _, class := range sortedKeys(metric.ClassExhausted) {
		add("Class %q exhausted on %s", class, plural(metric.ClassExhausted[class], "node"))
	}
	for _, dim := range sortedKeys(metric.DimensionExhausted) {
		add("Dimension %q exhausted on %s", dim, plural(metric.DimensionExhausted[dim], "node"))
	}
	for _, q := range metric.QuotaExhausted {
		add("Quota limit hit %q", q)
	}
	if verbose {
		lines = append(lines, formatScores(metric, prefix)...)
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// formatScores lists the best candidate nodes and their scores, for -verbose.
func formatScores(metric *api.AllocationMetric, prefix string) []string {
	if len(metric.ScoreMetaData) == 0 {
		return nil
	}
	scores := append([]*api.NodeScoreMeta(nil), metric.ScoreMetaData...)
	sort.SliceStable(scores, func(i, j int) bool { return scores[i].NormScore > scores[j].NormScore })
	lines := []string{prefix + "Node scores:"}
	for _, s := range scores {
		var parts []string
		for _, k := range sortedKeys(s.Scores) {
			parts = append(parts, fmt.Sprintf("%s=%.3g", k, s.Scores[k]))
		}
		lines = append(lines, fmt.Sprintf("%s  %s  %.3g  %s", prefix, s.NodeID, s.NormScore, strings.Join(parts, " ")))
	}
	return lines
}
