package command

import (
	"github.com/drover-sched/drover/api"
)

const operatorMetricsHelp = `
Usage: drover operator metrics [options]

  Print the agent's metrics: those of its last finished aggregation
  interval as JSON, or all of them in the Prometheus text format (the
  agent's telemetry block must set prometheus_metrics = true). With ACLs
  on, the token needs agent read.

Metrics Options:

  -format <format>
    "prometheus" for the Prometheus text format; JSON by default.

  -pretty
    Indent the JSON.
`

func operatorMetrics(m *Meta, args []string) int {
	c := m.cmdLine("operator metrics", operatorMetricsHelp, noArgs)
	format := c.String("format", "", "")
	pretty := c.Bool("pretty", false, "")
	if code, ok := c.parse(args); !ok {
		return code
	}
	if *format != "" && *format != "prometheus" {
		return c.usageError(`-format must be "prometheus" (or left out for JSON)`)
	}
	client, code, ok := c.client()
	if !ok {
		return code
	}
	q := &api.QueryOptions{Params: map[string]string{}}
	if *format != "" {
		q.Params["format"] = *format
	}
	if *pretty {
		q.Params["pretty"] = ""
	}
	out, err := client.Operator().Metrics(q)
	if err != nil {
		return m.errorf("Error getting metrics: %v", err)
	}
	if _, err := m.stdout.Write(out); err != nil {
		return m.errorf("Error writing metrics: %v", err)
	}
	return 0
}
