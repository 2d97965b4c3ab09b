package command

import (
	"fmt"
	"strconv"
	"strings"
	"text/template"

	"github.com/drover-sched/drover/api"
)

const operatorSchedulerGetConfigHelp = `
Usage: drover operator scheduler get-config [options]

  Display the cluster's scheduler configuration.

Get-Config Options:

  -json
    Print the configuration response as JSON.

  -t
    Format the configuration response with a Go template, for example
    -t '{{.SchedulerConfig.SchedulerAlgorithm}}'.
`

func operatorSchedulerGetConfig(m *Meta, args []string) int {
	fs := m.flagSet("operator scheduler get-config", operatorSchedulerGetConfigHelp)
	asJSON := fs.Bool("json", false, "")
	tmpl := fs.String("t", "", "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return m.usageError(fs, "This command takes no arguments")
	}
	if *asJSON && *tmpl != "" {
		return m.usageError(fs, "Both -json and -t are not allowed")
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	resp, _, err := client.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return m.errorf("Error querying scheduler configuration: %v", err)
	}
	switch {
	case *asJSON:
		return m.printJSON(resp)
	case *tmpl != "":
		return m.printTemplate(*tmpl, resp)
	}
	c := resp.SchedulerConfig
	if c == nil {
		return m.errorf("Error querying scheduler configuration: the answer holds no configuration")
	}
	fmt.Fprint(m.stdout, keyValues([]string{
		"Scheduler Algorithm|" + string(c.SchedulerAlgorithm),
		fmt.Sprintf("Memory Oversubscription|%t", c.MemoryOversubscriptionEnabled),
		fmt.Sprintf("Reject Job Registration|%t", c.RejectJobRegistration),
		fmt.Sprintf("Pause Eval Broker|%t", c.PauseEvalBroker),
		fmt.Sprintf("Preemption System Scheduler|%t", c.PreemptionConfig.SystemSchedulerEnabled),
		fmt.Sprintf("Preemption Service Scheduler|%t", c.PreemptionConfig.ServiceSchedulerEnabled),
		fmt.Sprintf("Preemption Batch Scheduler|%t", c.PreemptionConfig.BatchSchedulerEnabled),
		fmt.Sprintf("Preemption SysBatch Scheduler|%t", c.PreemptionConfig.SysBatchSchedulerEnabled),
		fmt.Sprintf("Modify Index|%d", c.ModifyIndex),
	}))
	return 0
}

// printTemplate executes a -t template on v.
func (m *Meta) printTemplate(text string, v any) int {
	t, err := template.New("out").Parse(text)
	if err != nil {
		return m.errorf("Error parsing template %q: %v", text, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, v); err != nil {
		return m.errorf("Error executing template %q: %v", text, err)
	}
	m.out("%s", b.String())
	return 0
}

const operatorSchedulerSetConfigHelp = `
Usage: drover operator scheduler set-config [options]

  Change the cluster's scheduler configuration. Only the settings named
  by flags change; the others keep their current values. The change is a
  check-and-set against the configuration just read, so a concurrent
  change by someone else is never overwritten: the command then fails and
  can be run again.

Set-Config Options:

  -check-index=<index>
    Change the configuration only if its modify index is still <index>.

  -scheduler-algorithm=["binpack"|"spread"]
    How placements choose among nodes: binpack fills nodes up, spread
    uses the emptiest.

  -memory-oversubscription=[true|false]
    When true, tasks may use memory up to their memory_max, if the node
    has it free. When false, memory_max is ignored.

  -reject-job-registration=[true|false]
    When true, job registration, dispatch and scale requests are refused,
    for every caller (Drover has no ACL tokens to exempt), to shed load
    during an incident.

  -pause-eval-broker=[true|false]
    When true, the leader stops handing evaluations to the schedulers:
    nothing is scheduled, but evaluations keep queueing and run once it
    is set back to false.

  -preempt-batch-scheduler=[true|false]
  -preempt-service-scheduler=[true|false]
  -preempt-sysbatch-scheduler=[true|false]
  -preempt-system-scheduler=[true|false]
    Whether jobs of that type may preempt lower-priority work. Drover
    stores these settings but does not preempt yet.
`

// optBool is a boolean flag that remembers whether it was given, so
// set-config changes only what the operator named.
type optBool struct {
	set, v bool
}

func (b *optBool) String() string {
	if b == nil || !b.set {
		return ""
	}
	return strconv.FormatBool(b.v)
}

func (b *optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("must be true or false, got %q", s)
	}
	b.set, b.v = true, v
	return nil
}

// IsBoolFlag lets -flag alone mean -flag=true.
func (b *optBool) IsBoolFlag() bool { return true }

// merge writes the flag's value into dst if it was given.
func (b *optBool) merge(dst *bool) {
	if b.set {
		*dst = b.v
	}
}

func operatorSchedulerSetConfig(m *Meta, args []string) int {
	fs := m.flagSet("operator scheduler set-config", operatorSchedulerSetConfigHelp)
	checkIndex := fs.String("check-index", "", "")
	algorithm := fs.String("scheduler-algorithm", "", "")
	var memOversub, rejectJobs, pauseBroker, preemptBatch, preemptService, preemptSysBatch, preemptSystem optBool
	fs.Var(&memOversub, "memory-oversubscription", "")
	fs.Var(&rejectJobs, "reject-job-registration", "")
	fs.Var(&pauseBroker, "pause-eval-broker", "")
	fs.Var(&preemptBatch, "preempt-batch-scheduler", "")
	fs.Var(&preemptService, "preempt-service-scheduler", "")
	fs.Var(&preemptSysBatch, "preempt-sysbatch-scheduler", "")
	fs.Var(&preemptSystem, "preempt-system-scheduler", "")
	if code, ok := m.parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 0 {
		return m.usageError(fs, "This command takes no arguments")
	}
	var wantIndex uint64
	if *checkIndex != "" {
		n, err := strconv.ParseUint(*checkIndex, 10, 64)
		if err != nil {
			return m.errorf("Error parsing check-index value %q: must be a non-negative integer", *checkIndex)
		}
		wantIndex = n
	}
	client, err := m.client()
	if err != nil {
		return m.errorf("%v", err)
	}
	resp, _, err := client.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		return m.errorf("Error querying for scheduler configuration: %v", err)
	}
	c := resp.SchedulerConfig
	if c == nil {
		return m.errorf("Error querying for scheduler configuration: the answer holds no configuration")
	}
	if *checkIndex != "" && c.ModifyIndex != wantIndex {
		return m.errorf("Error performing check index set: check-index %d does not match the current modify index %d", wantIndex, c.ModifyIndex)
	}
	if *algorithm != "" {
		c.SchedulerAlgorithm = api.SchedulerAlgorithm(*algorithm)
	}
	memOversub.merge(&c.MemoryOversubscriptionEnabled)
	rejectJobs.merge(&c.RejectJobRegistration)
	pauseBroker.merge(&c.PauseEvalBroker)
	preemptBatch.merge(&c.PreemptionConfig.BatchSchedulerEnabled)
	preemptService.merge(&c.PreemptionConfig.ServiceSchedulerEnabled)
	preemptSysBatch.merge(&c.PreemptionConfig.SysBatchSchedulerEnabled)
	preemptSystem.merge(&c.PreemptionConfig.SystemSchedulerEnabled)

	// The check-and-set is against the configuration just read (or the
	// index the operator named, which was just checked to be the same).
	result, _, err := client.Operator().SchedulerCASConfiguration(c, nil)
	if err != nil {
		return m.errorf("Error setting scheduler configuration: %v", err)
	}
	if !result.Updated {
		m.out("Scheduler configuration could not be atomically updated, please try again")
		return 1
	}
	m.out("Scheduler configuration updated!")
	return 0
}
